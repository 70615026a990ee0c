//! `read_image`: an image file of the workspace, handed to the model as an
//! image (PNG, JPEG, GIF or WebP, told by its first bytes, not its name).
//!
//! The text result says what was read; the image itself rides beside it
//! ([`super::Image`]) and each provider puts it on the wire the way its API
//! allows (see `provider`). A provider that cannot carry an image at all
//! (the script provider) gets an error result saying so. The log keeps the
//! text, not the picture: the file is in the workspace to look at again.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Image, ImageSupport, ToolError, ToolOutput, Workspace};
use crate::error::WholeFile;
use crate::tool::Tool;

/// The file read_image reads, and what it suggests instead. The largest is
/// 3,750,000 bytes: its base64 form stays under the 5 MB an image may be on
/// the Anthropic API, the strictest of the wire formats.
const IMAGE_FILE: WholeFile = WholeFile {
    max_bytes: 3_750_000,
    reads: "read_image sends",
    for_directory: "use list_directory or glob to find the image",
    for_large: "make a smaller copy with run_command first",
};

/// Look at an image file of the workspace (PNG, JPEG, GIF or WebP, at most 3.75
/// MB): a screenshot, a diagram, a rendered page.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Path relative to the workspace root
    path: String,
}

impl Tool for Args {
    const NAME: &'static str = "read_image";
    const AT_CALL: bool = true;
}

pub(super) fn run(
    workspace: &Workspace,
    support: &ImageSupport,
    args: Args,
) -> Result<ToolOutput, ToolError> {
    if let ImageSupport::Refused(why) = support {
        return Err(ToolError::Failed(format!(
            "read_image cannot show '{}': {why}",
            args.path
        )));
    }
    let bytes = IMAGE_FILE.read(workspace, &args.path)?;
    let Some(media_type) = media_type(&bytes) else {
        return Err(ToolError::Failed(format!(
            "'{}' is not a PNG, JPEG, GIF or WebP image; read_file reads text",
            args.path
        )));
    };
    Ok(ToolOutput {
        image: Some(Image {
            media_type: media_type.to_owned(),
            base64: base64(&bytes),
        }),
        ..ToolOutput::ok(format!(
            "{}: {media_type}, {} bytes; the image is attached",
            args.path,
            bytes.len()
        ))
    })
}

/// The image type by its magic bytes.
fn media_type(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// Standard base64 with padding (RFC 4648 §4).
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_rfc_vectors() {
        for (input, expected) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(input.as_bytes()), expected);
        }
    }

    #[test]
    fn images_are_told_by_their_first_bytes() {
        assert_eq!(media_type(b"\x89PNG\r\n\x1a\nrest"), Some("image/png"));
        assert_eq!(media_type(&[0xff, 0xd8, 0xff, 0xe0]), Some("image/jpeg"));
        assert_eq!(media_type(b"GIF89a..."), Some("image/gif"));
        assert_eq!(media_type(b"RIFF\0\0\0\0WEBPVP8 "), Some("image/webp"));
        assert_eq!(media_type(b"<svg>"), None);
    }

    #[test]
    fn an_image_comes_back_attached_and_a_provider_without_images_is_told_so() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.png"), b"\x89PNG\r\n\x1a\nxyz").unwrap();
        std::fs::write(dir.path().join("b.txt"), b"text").unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        let args = |path: &str| Args {
            path: path.to_owned(),
        };
        let out = run(&ws, &ImageSupport::Accepted, args("a.png")).unwrap();
        assert_eq!(
            out.text,
            "a.png: image/png, 11 bytes; the image is attached"
        );
        let image = out.image.unwrap();
        assert_eq!(image.media_type, "image/png");
        assert_eq!(image.base64, base64(b"\x89PNG\r\n\x1a\nxyz"));
        let text = run(&ws, &ImageSupport::Accepted, args("b.txt")).unwrap_err();
        assert!(text.to_string().contains("not a PNG"), "{text}");
        let refused = ImageSupport::Refused("the script provider takes no images".into());
        let err = run(&ws, &refused, args("a.png")).unwrap_err();
        assert!(
            err.to_string().contains("script provider takes no images"),
            "{err}"
        );
        let outside = run(&ws, &ImageSupport::Accepted, args("../x.png")).unwrap_err();
        assert!(matches!(outside, ToolError::Path(_)), "{outside}");
    }
}
