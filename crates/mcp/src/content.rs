//! A `tools/call` result read into what a session hands the model: the text
//! of every block (an embedded resource by its text or its uri, anything
//! else by its type) and the images, whatever else the server put there.
//! The result is read as JSON so a block type a newer server sends is
//! named rather than refused.

use serde_json::Value;

/// One tool call's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The text blocks, one after another.
    pub text: String,
    /// The images, in order.
    pub images: Vec<AnswerImage>,
    /// The server said the call failed (`isError`).
    pub is_error: bool,
}

/// An image block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnswerImage {
    pub media_type: String,
    pub base64: String,
}

impl Answer {
    /// Reads a `CallToolResult` as JSON.
    pub(crate) fn from_result(result: &Value) -> Answer {
        let mut parts: Vec<String> = Vec::new();
        let mut images = Vec::new();
        let blocks = result
            .get("content")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        for block in blocks {
            let kind = block.get("type").and_then(Value::as_str).unwrap_or("?");
            let text = |key: &str| block.get(key).and_then(Value::as_str).map(str::to_owned);
            match kind {
                "text" => parts.push(text("text").unwrap_or_default()),
                "image" => match (text("mimeType"), text("data")) {
                    (Some(media_type), Some(base64)) => {
                        images.push(AnswerImage { media_type, base64 });
                    }
                    _ => parts.push("[an image block without its data]".to_owned()),
                },
                "resource" => {
                    let resource = block.get("resource");
                    let field = |key| {
                        resource
                            .and_then(|r| r.get(key))
                            .and_then(Value::as_str)
                            .map(str::to_owned)
                    };
                    parts.push(field("text").unwrap_or_else(|| {
                        format!("[resource {}]", field("uri").unwrap_or_default())
                    }));
                }
                "resource_link" => parts.push(format!(
                    "[resource link {}]",
                    text("uri").unwrap_or_default()
                )),
                other => parts.push(format!("[a {other} block]")),
            }
        }
        if parts.is_empty()
            && let Some(structured) = result.get("structuredContent")
        {
            parts.push(structured.to_string());
        }
        Answer {
            text: parts.join("\n"),
            images,
            is_error: result
                .get("isError")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_images_resources_and_unknown_blocks_are_all_said() {
        let answer = Answer::from_result(&json!({
            "content": [
                {"type": "text", "text": "one"},
                {"type": "image", "mimeType": "image/png", "data": "AAAA"},
                {"type": "resource", "resource": {"uri": "file:///a", "text": "two"}},
                {"type": "resource", "resource": {"uri": "file:///b", "blob": "AA"}},
                {"type": "audio", "data": "AA"},
            ],
            "isError": true,
        }));
        assert_eq!(
            answer.text,
            "one\ntwo\n[resource file:///b]\n[a audio block]"
        );
        assert_eq!(answer.images.len(), 1);
        assert!(answer.is_error);
        let structured = Answer::from_result(&json!({"structuredContent": {"a": 1}}));
        assert_eq!(structured.text, r#"{"a":1}"#);
    }
}
