//! The page: one HTML file, two scripts and one stylesheet, embedded in the
//! binary so there is no build step and nothing to install beside `chock`.
//! The script renders every value from a log with `textContent`, never as
//! markup, so text from a session cannot become HTML.

use axum::response::IntoResponse;

const INDEX: &str = include_str!("../assets/index.html");
const SCRIPT: &str = include_str!("../assets/app.js");
const RENDER: &str = include_str!("../assets/render.js");
const STYLE: &str = include_str!("../assets/style.css");

/// Bytes a browser downloads on the first load of the page.
pub const FIRST_LOAD_BYTES: usize = INDEX.len() + SCRIPT.len() + RENDER.len() + STYLE.len();

/// Every asset is revalidated: a new `chock` serves a new page at once.
const NO_CACHE: (&str, &str) = ("cache-control", "no-cache");

/// The page's own rules: scripts and styles from serve only, no inline code.
const CSP: (&str, &str) = (
    "content-security-policy",
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; \
     object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
);

pub(crate) async fn index() -> impl IntoResponse {
    (
        [("content-type", "text/html; charset=utf-8"), NO_CACHE, CSP],
        INDEX,
    )
}

pub(crate) async fn script() -> impl IntoResponse {
    (
        [("content-type", "text/javascript; charset=utf-8"), NO_CACHE],
        SCRIPT,
    )
}

pub(crate) async fn render() -> impl IntoResponse {
    (
        [("content-type", "text/javascript; charset=utf-8"), NO_CACHE],
        RENDER,
    )
}

pub(crate) async fn style() -> impl IntoResponse {
    (
        [("content-type", "text/css; charset=utf-8"), NO_CACHE],
        STYLE,
    )
}
