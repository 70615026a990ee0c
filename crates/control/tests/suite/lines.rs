//! The bounded line reader: a line past the ceiling is an error, not a
//! bigger buffer, and bytes that are not UTF-8 are named.

use chock_control::{LineError, LineReader};
use tokio::io::BufReader;

#[tokio::test]
async fn reads_lines_and_a_clean_end() {
    let data: &[u8] = b"one\ntwo\n";
    let mut reader = LineReader::new(BufReader::new(data), 16);
    assert_eq!(reader.next_line().await.unwrap().as_deref(), Some("one"));
    assert_eq!(reader.next_line().await.unwrap().as_deref(), Some("two"));
    assert_eq!(reader.next_line().await.unwrap(), None);
}

#[tokio::test]
async fn a_line_past_the_limit_is_refused_without_reading_it_all() {
    let data = vec![b'a'; 10 << 20];
    let mut reader = LineReader::new(BufReader::new(&data[..]), 1 << 20);
    assert!(
        matches!(reader.next_line().await, Err(LineError::TooLong { limit }) if limit == 1 << 20)
    );
}

#[tokio::test]
async fn a_line_exactly_at_the_limit_is_read() {
    let mut data = vec![b'a'; 64];
    data.push(b'\n');
    let mut reader = LineReader::new(BufReader::with_capacity(7, &data[..]), 64);
    assert_eq!(reader.next_line().await.unwrap().map(|l| l.len()), Some(64));
}

#[tokio::test]
async fn garbage_bytes_are_not_utf8() {
    let data: &[u8] = b"\xff\xfe\x00garbage\n";
    let mut reader = LineReader::new(BufReader::new(data), 64);
    assert!(matches!(reader.next_line().await, Err(LineError::NotUtf8)));
}

#[tokio::test]
async fn a_half_line_at_the_end_is_unterminated() {
    let data: &[u8] = b"hello chock";
    let mut reader = LineReader::new(BufReader::new(data), 64);
    assert!(matches!(
        reader.next_line().await,
        Err(LineError::Unterminated(11))
    ));
}
