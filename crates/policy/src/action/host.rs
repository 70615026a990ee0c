//! Hosts as action segments: lower-cased, labels reversed.
//!
//! `docs.ziglang.org` becomes `org.ziglang.docs`, so a class rule such as
//! `net.fetch.org.ziglang.*` covers every name under ziglang.org and no name
//! somebody else registered (`ziglang.org.evil.com` reverses to
//! `com.evil.org.ziglang`). IP literals cannot be reversed meaningfully, so:
//!
//! - IPv4 stays in written order (`net.connect.10.0.0.1`), most significant
//!   octet first, which is the same wide-to-narrow direction a reversed name
//!   has: `net.connect.10.*` is 10.0.0.0/8. A domain whose last label is all
//!   digits is refused, so no reversed name can start like an address.
//! - IPv6 is written `ipv6.` and then its eight groups as four lower-case hex
//!   digits each, in written order (`::1` is `ipv6.0000.0000.0000.0000.0000.0000.0000.0001`);
//!   a domain under a top-level label `ipv6` is refused for the same reason.

use std::net::{Ipv4Addr, Ipv6Addr};

use super::ActionError;

/// The reversed, lower-cased segments of `host`, joined by dots.
pub(crate) fn reversed(host: &str) -> Result<String, ActionError> {
    let bad = |reason: &str| ActionError::BadHost {
        host: host.to_owned(),
        reason: reason.to_owned(),
    };
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    if let Ok(v4) = bare.parse::<Ipv4Addr>() {
        return Ok(v4.to_string());
    }
    if bare.contains(':') {
        let v6: Ipv6Addr = bare
            .parse()
            .map_err(|_| bad("it holds a colon but is not an IPv6 address"))?;
        let groups: Vec<String> = v6.segments().iter().map(|g| format!("{g:04x}")).collect();
        return Ok(format!("ipv6.{}", groups.join(".")));
    }
    let name = bare.strip_suffix('.').unwrap_or(bare).to_ascii_lowercase();
    if name.is_empty() {
        return Err(bad("it is empty"));
    }
    if !name.is_ascii() {
        return Err(bad(
            "it is not ASCII; write an internationalised name in its xn-- (punycode) form",
        ));
    }
    if name.len() > 253 {
        return Err(bad("it is longer than 253 characters"));
    }
    let labels: Vec<&str> = name.split('.').collect();
    for label in &labels {
        if label.is_empty() {
            return Err(bad(
                "it has an empty label (two dots in a row, or a leading dot)",
            ));
        }
        if label.len() > 63 {
            return Err(bad("a label is longer than 63 characters"));
        }
        if !label
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(bad(
                "a label holds a character other than a letter, digit, '-' or '_'",
            ));
        }
        if label.starts_with('-') || label.ends_with('-') {
            return Err(bad("a label starts or ends with '-'"));
        }
    }
    let last = labels.last().copied().unwrap_or_default();
    if last.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad(
            "its last label is all digits, which no domain has; write an IP address in full",
        ));
    }
    if last == "ipv6" {
        return Err(bad(
            "`ipv6` is reserved as the first segment of an IPv6 address",
        ));
    }
    let mut out = String::with_capacity(name.len());
    for (i, label) in labels.iter().rev().enumerate() {
        if i > 0 {
            out.push('.');
        }
        out.push_str(label);
    }
    Ok(out)
}

/// The host a reversed segment list names, the inverse of [`reversed`]; used
/// to read an action name a person wrote back through the builder.
pub(crate) fn unreversed(segments: &[&str]) -> String {
    if segments.first() == Some(&"ipv6") && segments.len() == 9 {
        return segments[1..].join(":");
    }
    if segments.len() == 4
        && segments
            .iter()
            .all(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
    {
        return segments.join(".");
    }
    let mut parts: Vec<&str> = segments.to_vec();
    parts.reverse();
    parts.join(".")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_lower_cased_and_reversed() {
        assert_eq!(reversed("Docs.ZigLang.org").unwrap(), "org.ziglang.docs");
        assert_eq!(reversed("ziglang.org.").unwrap(), "org.ziglang");
        assert_eq!(reversed("localhost").unwrap(), "localhost");
    }

    #[test]
    fn a_lookalike_domain_does_not_share_the_prefix() {
        assert_eq!(
            reversed("ziglang.org.evil.com").unwrap(),
            "com.evil.org.ziglang"
        );
    }

    #[test]
    fn ipv4_stays_in_written_order() {
        assert_eq!(reversed("10.0.0.1").unwrap(), "10.0.0.1");
    }

    #[test]
    fn ipv6_is_expanded_under_a_marker() {
        assert_eq!(
            reversed("[::1]").unwrap(),
            "ipv6.0000.0000.0000.0000.0000.0000.0000.0001"
        );
        assert_eq!(
            unreversed(
                &"ipv6.0000.0000.0000.0000.0000.0000.0000.0001"
                    .split('.')
                    .collect::<Vec<_>>()
            ),
            "0000:0000:0000:0000:0000:0000:0000:0001"
        );
    }

    #[test]
    fn bad_hosts_say_why() {
        for bad in [
            "",
            "a..b",
            "-a.com",
            "a.123",
            "x.ipv6",
            "bücher.de",
            "a b.com",
            "a*.com",
            "1:2",
        ] {
            assert!(reversed(bad).is_err(), "{bad}");
        }
    }
}
