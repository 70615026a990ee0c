//! The block split against a plain forward read: every split of every
//! awkward input must hand back the same lines, offsets and end.

use std::io::Write as _;

use super::*;

/// What one forward read finds in `data[start..]`: (offset, line) for each
/// complete line, and the offset after the last.
fn forward(data: &[u8], start: usize) -> (Vec<(u64, Vec<u8>)>, u64) {
    let mut lines = Vec::new();
    let mut at = start;
    while let Some(n) = memchr::memchr(b'\n', &data[at..]) {
        lines.push((at as u64, data[at..at + n].to_vec()));
        at += n + 1;
    }
    (lines, at as u64)
}

fn file_with(data: &[u8]) -> File {
    let mut file = tempfile::tempfile().unwrap();
    file.write_all(data).unwrap();
    file
}

fn split_read(file: &File, start: u64, end: u64, split: Split) -> (Vec<(u64, Vec<u8>)>, u64) {
    let mut lines = Vec::new();
    let last = for_each_line(file, start, end, split, <[u8]>::to_vec, |offset, line| {
        lines.push((offset, line));
    })
    .unwrap();
    (lines, last)
}

/// Inputs chosen for their edges: empty, one byte, lines without a final
/// newline, empty lines, a line many blocks long, newlines back to back.
fn inputs() -> Vec<Vec<u8>> {
    let long = "x".repeat(41);
    vec![
        b"".to_vec(),
        b"\n".to_vec(),
        b"a".to_vec(),
        b"a\n".to_vec(),
        b"\n\n\n".to_vec(),
        b"ab\ncd\nef".to_vec(),
        b"one\ntwo\nthree\nfour\nfive\nsix\nseven\n".to_vec(),
        format!("a\n{long}\nb\n{long}").into_bytes(),
        format!("{long}\n\nc\n{long}\nd\n").into_bytes(),
    ]
}

#[test]
fn every_split_reads_what_a_forward_read_reads() {
    for data in inputs() {
        let file = file_with(&data);
        let expected = forward(&data, 0);
        for block in 1..=9 {
            for workers in 1..=3 {
                let split = Split { block, workers };
                assert_eq!(
                    split_read(&file, 0, data.len() as u64, split),
                    expected,
                    "{:?} split {split:?}",
                    String::from_utf8_lossy(&data)
                );
            }
        }
    }
}

#[test]
fn a_range_starting_part_way_reads_from_its_start() {
    let data = b"skipped\nab\ncd\nefgh\nij\n";
    let file = file_with(data);
    let expected = forward(data, 8);
    for block in 1..=6 {
        for workers in 1..=3 {
            let split = Split { block, workers };
            assert_eq!(split_read(&file, 8, data.len() as u64, split), expected);
        }
    }
}

#[test]
fn bytes_past_the_end_given_are_not_read() {
    // A writer appended "cd\n" after the reader took the length: the line
    // cut at `end` is a torn tail for this read, even though its newline is
    // in the file now.
    let data = b"ab\ncd\n";
    let file = file_with(data);
    for block in 1..=4 {
        for workers in 1..=2 {
            let split = Split { block, workers };
            assert_eq!(
                split_read(&file, 0, 4, split),
                (vec![(0, b"ab".to_vec())], 3)
            );
        }
    }
}

#[test]
fn an_empty_range_has_no_lines() {
    let file = file_with(b"");
    let split = Split {
        block: 4,
        workers: 2,
    };
    assert_eq!(split_read(&file, 0, 0, split), (vec![], 0));
}

#[test]
fn a_log_of_a_few_blocks_uses_every_core_and_a_small_one_none() {
    assert_eq!(Split::for_len(0).workers, 1);
    assert_eq!(Split::for_len(BLOCK).workers, 1);
    let cores = std::thread::available_parallelism().map_or(1, NonZeroUsize::get);
    assert_eq!(Split::for_len(64 * BLOCK).workers, cores.min(MAX_WORKERS));
}
