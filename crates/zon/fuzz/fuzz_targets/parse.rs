//! Arbitrary bytes (as UTF-8 when they are) into `chock_zon::parse`. It must
//! never panic, every error must carry a position, and whatever parses must
//! be written by the writer in a form that parses back to the same value.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    match chock_zon::parse(src) {
        Ok(value) => {
            let text = value.to_string();
            match chock_zon::parse(&text) {
                Ok(back) => assert!(back == value, "round trip changed the value:\n{text}"),
                Err(e) => panic!("the writer produced text that does not parse: {e}\n{text}"),
            }
        }
        Err(e) => assert!(
            e.line() >= 1 && e.column() >= 1,
            "error without a position: {e}"
        ),
    }
});
