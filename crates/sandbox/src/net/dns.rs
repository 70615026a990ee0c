//! The little DNS the fake resolver speaks (RFC 1035): read one query's
//! header and single question, write a reply with at most one A record.
//!
//! Only what a stub resolver (glibc, musl, Go's, c-ares) sends is read:
//! one question, no compression inside it (a question never needs any).
//! Anything else that still looks like a query is answered FORMERR so the
//! client stops waiting; what does not even carry a query header (too
//! short, or a response) is ignored. Extra records after the question
//! (an EDNS OPT) are skipped, and the reply carries none, which every stub
//! resolver accepts.

use std::net::Ipv4Addr;

/// Query type A.
pub(crate) const TYPE_A: u16 = 1;
/// Query type AAAA.
#[cfg(test)]
pub(crate) const TYPE_AAAA: u16 = 28;
/// Class IN.
const CLASS_IN: u16 = 1;

/// Longest name on the wire, length octets included (RFC 1035 2.3.4).
const MAX_NAME: usize = 255;

/// Response codes the resolver uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rcode {
    NoError = 0,
    FormErr = 1,
    ServFail = 2,
    NxDomain = 3,
    NotImp = 4,
    Refused = 5,
}

/// One question, as asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Query {
    pub(crate) id: u16,
    /// Recursion desired, echoed back.
    rd: bool,
    /// The name, lower case, without the trailing dot.
    pub(crate) name: String,
    pub(crate) qtype: u16,
    pub(crate) qclass: u16,
    /// The question section exactly as received, echoed in the reply.
    question: Vec<u8>,
}

impl Query {
    /// Whether the question is of class IN (the only one answered).
    pub(crate) fn is_internet(&self) -> bool {
        self.qclass == CLASS_IN
    }
}

/// What a packet turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Packet {
    /// A query to answer.
    Query(Query),
    /// A query header around something unreadable: answer FORMERR (or
    /// NOTIMP for an opcode other than QUERY) with this id.
    Bad { id: u16, rcode: Rcode },
    /// Not a query at all: no answer.
    Ignore,
}

/// Reads one packet.
pub(crate) fn parse(p: &[u8]) -> Packet {
    if p.len() < 12 {
        return Packet::Ignore;
    }
    let id = u16::from_be_bytes([p[0], p[1]]);
    let flags = u16::from_be_bytes([p[2], p[3]]);
    if flags & 0x8000 != 0 {
        // A response: answering it could start a loop between resolvers.
        return Packet::Ignore;
    }
    if (flags >> 11) & 0xf != 0 {
        return Packet::Bad {
            id,
            rcode: Rcode::NotImp,
        };
    }
    let bad = Packet::Bad {
        id,
        rcode: Rcode::FormErr,
    };
    if u16::from_be_bytes([p[4], p[5]]) != 1 {
        return bad;
    }
    let mut at = 12;
    let mut labels: Vec<String> = Vec::new();
    loop {
        let Some(&len) = p.get(at) else {
            return bad;
        };
        at += 1;
        if len == 0 {
            break;
        }
        // 0xc0 is a compression pointer, 0x40 and 0x80 reserved: none has
        // a place in a question.
        if len & 0xc0 != 0 || at - 12 + usize::from(len) >= MAX_NAME {
            return bad;
        }
        let Some(label) = p.get(at..at + usize::from(len)) else {
            return bad;
        };
        at += usize::from(len);
        labels.push(
            label
                .iter()
                .map(|b| char::from(b.to_ascii_lowercase()))
                .collect(),
        );
    }
    let Some(tail) = p.get(at..at + 4) else {
        return bad;
    };
    let qtype = u16::from_be_bytes([tail[0], tail[1]]);
    let qclass = u16::from_be_bytes([tail[2], tail[3]]);
    Packet::Query(Query {
        id,
        rd: flags & 0x0100 != 0,
        name: labels.join("."),
        qtype,
        qclass,
        question: p[12..at + 4].to_vec(),
    })
}

/// The reply to `q`: `rcode`, and an A record for `answer` when given.
pub(crate) fn reply(q: &Query, rcode: Rcode, answer: Option<(Ipv4Addr, u32)>) -> Vec<u8> {
    let mut out = Vec::with_capacity(12 + q.question.len() + 16);
    out.extend_from_slice(&q.id.to_be_bytes());
    // QR, AA, RA; RD echoed.
    let flags: u16 = 0x8000 | 0x0400 | 0x0080 | if q.rd { 0x0100 } else { 0 } | rcode as u16;
    out.extend_from_slice(&flags.to_be_bytes());
    out.extend_from_slice(&1u16.to_be_bytes());
    out.extend_from_slice(&u16::from(answer.is_some()).to_be_bytes());
    out.extend_from_slice(&[0, 0, 0, 0]);
    out.extend_from_slice(&q.question);
    if let Some((addr, ttl)) = answer {
        // A pointer to the question's name at offset 12.
        out.extend_from_slice(&[0xc0, 12]);
        out.extend_from_slice(&TYPE_A.to_be_bytes());
        out.extend_from_slice(&CLASS_IN.to_be_bytes());
        out.extend_from_slice(&ttl.to_be_bytes());
        out.extend_from_slice(&4u16.to_be_bytes());
        out.extend_from_slice(&addr.octets());
    }
    out
}

/// A header-only reply for a packet whose question could not be read.
pub(crate) fn bare_reply(id: u16, rcode: Rcode) -> Vec<u8> {
    let mut out = Vec::with_capacity(12);
    out.extend_from_slice(&id.to_be_bytes());
    out.extend_from_slice(&(0x8000u16 | rcode as u16).to_be_bytes());
    out.extend_from_slice(&[0; 8]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(id: u16, name: &str, qtype: u16) -> Vec<u8> {
        let mut p = id.to_be_bytes().to_vec();
        p.extend_from_slice(&[0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]);
        for label in name.split('.') {
            p.push(label.len() as u8);
            p.extend_from_slice(label.as_bytes());
        }
        p.push(0);
        p.extend_from_slice(&qtype.to_be_bytes());
        p.extend_from_slice(&CLASS_IN.to_be_bytes());
        p
    }

    #[test]
    fn a_query_is_read_and_answered_with_one_record() {
        let p = query(0x1234, "Allowed.TEST", TYPE_A);
        let Packet::Query(q) = parse(&p) else {
            panic!("not a query: {:?}", parse(&p));
        };
        assert_eq!(q.name, "allowed.test");
        assert_eq!(q.qtype, TYPE_A);
        assert!(q.is_internet());
        let r = reply(&q, Rcode::NoError, Some((Ipv4Addr::new(127, 77, 0, 1), 5)));
        assert_eq!(&r[..2], &[0x12, 0x34]);
        assert_eq!(r[2] & 0x80, 0x80, "QR set");
        assert_eq!(r[3] & 0x0f, 0, "NOERROR");
        assert_eq!(&r[6..8], &[0, 1], "one answer");
        assert_eq!(&r[r.len() - 4..], &[127, 77, 0, 1]);
        assert_eq!(&r[12..p.len()], &p[12..], "question echoed");
    }

    #[test]
    fn an_empty_answer_has_no_record() {
        let Packet::Query(q) = parse(&query(7, "a.test", TYPE_AAAA)) else {
            panic!("not a query");
        };
        let r = reply(&q, Rcode::NoError, None);
        assert_eq!(&r[6..8], &[0, 0]);
        assert_eq!(r.len(), 12 + q.question.len());
    }

    #[test]
    fn malformed_packets_are_refused_or_ignored_never_read_past_the_end() {
        assert_eq!(parse(&[]), Packet::Ignore);
        assert_eq!(parse(&[0; 11]), Packet::Ignore);
        let mut response = query(1, "a.test", TYPE_A);
        response[2] |= 0x80;
        assert_eq!(parse(&response), Packet::Ignore);
        let formerr = |id| Packet::Bad {
            id,
            rcode: Rcode::FormErr,
        };
        // Truncated at every length inside the question.
        let full = query(9, "abc.example.test", TYPE_A);
        for n in 12..full.len() {
            assert_eq!(parse(&full[..n]), formerr(9), "cut at {n}");
        }
        // Two questions.
        let mut two = full.clone();
        two[5] = 2;
        assert_eq!(parse(&two), formerr(9));
        // A compression pointer in the question.
        let mut ptr = full.clone();
        ptr[12] = 0xc0;
        assert_eq!(parse(&ptr), formerr(9));
        // A name past 255 octets.
        let long = vec!["a".repeat(63); 5].join(".");
        assert_eq!(parse(&query(3, &long, TYPE_A)), formerr(3));
        // An opcode other than QUERY.
        let mut status = full;
        status[2] |= 2 << 3;
        assert_eq!(
            parse(&status),
            Packet::Bad {
                id: 9,
                rcode: Rcode::NotImp
            }
        );
        let r = bare_reply(9, Rcode::FormErr);
        assert_eq!(r.len(), 12);
        assert_eq!(r[3] & 0x0f, 1);
    }

    #[test]
    fn mangled_queries_never_panic_and_every_reply_keeps_the_id() {
        // A fixed xorshift, so a failure replays.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let base = query(0xbeef, "www.allowed.test", TYPE_A);
        for _ in 0..20_000 {
            let mut p = base.clone();
            let len = (next() % (base.len() as u64 + 8)) as usize;
            p.resize(len, 0);
            for _ in 0..(next() % 4) {
                if !p.is_empty() {
                    let at = (next() % p.len() as u64) as usize;
                    p[at] = next() as u8;
                }
            }
            let id = p.get(..2).map(|b| u16::from_be_bytes([b[0], b[1]]));
            match parse(&p) {
                Packet::Query(q) => {
                    let r = reply(&q, Rcode::NoError, Some((Ipv4Addr::LOCALHOST, 1)));
                    assert_eq!(Some(q.id), id);
                    assert_eq!(&r[..2], &p[..2]);
                }
                Packet::Bad { id: got, .. } => assert_eq!(Some(got), id),
                Packet::Ignore => {}
            }
        }
    }
}
