//! `all`: `list` for every project this daemon's state directory knows,
//! one line per session, newest first.

use super::{Conn, Shared, VerbError, list};

pub(crate) async fn all(shared: &Shared, conn: &mut Conn) -> Result<(), VerbError> {
    list::send_rows(shared, None, conn).await
}
