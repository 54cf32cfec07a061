//! Format detection that never guesses wrong: the first lines are read as
//! every text layout, each reading is scored for plausibility, and a format
//! is named only when one reading clearly wins; otherwise the error lists the
//! candidates and asks for `--format`.
//!
//! Score of a layout on the sample (up to [`SAMPLE_LINES`] lines that are
//! neither blank nor `#`, from the first [`HEAD_BYTES`] bytes):
//!
//! `score = fit x plausibility x (1 + order) / 2`
//!
//! * fit: the fraction of lines that look like the layout (its column
//!   signature) and parse without error, as a request or as a line the
//!   layout defines without one (a blkparse `Q` event, a header);
//! * plausibility: the mean over the parsed requests of
//!   `size_score x offset_score`, on bytes *after* the layout's unit
//!   conversion: sizes of 512 B .. 1 MiB in whole sectors score 1, larger
//!   ones less (up to 8 MiB 0.6, up to 64 MiB 0.3: a "size" of 65536
//!   sectors is 32 MiB, rarely a single request), sizes below 512 B 0.1 (a
//!   "byte" size of 8 is a sector count read in the wrong unit), sizes not a
//!   multiple of 512 B 0.3, size 0 0.5; offsets aligned to 4 KiB score 1, to
//!   512 B 0.9, others 0.4 (a sector number read as bytes is rarely aligned);
//! * order: the fraction of consecutive requests whose time does not go back
//!   (a non-time column read as time goes back about half the time).
//!
//! Layouts that read the sample into identical requests (`mqsim` and
//! `ssdsim`) are one reading; the first registered is named. Variants whose
//! name has a `:` (`blkparse:Q`, `csv:KEYS`) are never guessed.
//!
//! The winner must score at least [`MIN_SCORE`] and its nearest different
//! reading less than [`MARGIN`] times its score. Binary input is recognised
//! by magic (native Arrow, blktrace events, a tar of blktrace files) or
//! refused as "not a text trace".

use std::io::Read;
use std::path::Path;

use super::{blktrace, known_formats, native, open, Reader, Record, FORMATS, NATIVE};
use crate::error::{Error, Result};

/// Lines read for detection.
pub const SAMPLE_LINES: usize = 200;
/// Bytes of the (decompressed) file read for detection at most.
pub const HEAD_BYTES: usize = 256 << 10;
/// Lowest score a detected layout may have.
pub const MIN_SCORE: f64 = 0.5;
/// The runner-up must score below this fraction of the winner.
pub const MARGIN: f64 = 0.8;

/// One layout's reading of the sample.
#[derive(Clone, Debug)]
pub struct Candidate {
    /// Format name.
    pub name: &'static str,
    /// The score, 0..=1.
    pub score: f64,
    /// Lines that fit the layout.
    pub fitting: usize,
    /// The requests read.
    pub records: Vec<Record>,
}

/// Plausibility of a request size [bytes].
fn size_score(size: u64) -> f64 {
    match size {
        0 => 0.5,
        1..=511 => 0.1,
        s if !s.is_multiple_of(512) => 0.3,
        s if s <= 1 << 20 => 1.0,
        s if s <= 8 << 20 => 0.6,
        s if s <= 64 << 20 => 0.3,
        _ => 0.05,
    }
}

/// Plausibility of a request offset [bytes].
fn offset_score(offset: u64) -> f64 {
    if offset.is_multiple_of(4096) {
        1.0
    } else if offset.is_multiple_of(512) {
        0.9
    } else {
        0.4
    }
}

/// Every guessable text layout's reading of `lines`, best first (ties keep
/// registry order).
pub fn rank(lines: &[&str]) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = FORMATS
        .iter()
        .filter(|f| !f.name.contains(':'))
        .filter_map(|f| match f.reader {
            Reader::Text(build) => Some(score(f.name, &*build(), lines)),
            _ => None,
        })
        .collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score));
    out
}

fn score(name: &'static str, format: &dyn super::LineFormat, lines: &[&str]) -> Candidate {
    let mut fitting = 0;
    let mut records = Vec::new();
    for line in lines {
        if !format.looks_like(line) {
            continue;
        }
        match format.parse(line) {
            Ok(Some(r)) => {
                fitting += 1;
                records.push(r);
            }
            Ok(None) => fitting += 1,
            Err(_) => {}
        }
    }
    let score = if records.is_empty() || lines.is_empty() {
        0.0
    } else {
        let n = records.len() as f64;
        let plausible = records
            .iter()
            .map(|r| size_score(r.size) * offset_score(r.offset))
            .sum::<f64>()
            / n;
        let order = if records.len() < 2 {
            1.0
        } else {
            records
                .windows(2)
                .filter(|w| w[1].time_ns >= w[0].time_ns)
                .count() as f64
                / (n - 1.0)
        };
        fitting as f64 / lines.len() as f64 * plausible * (1.0 + order) / 2.0
    };
    Candidate {
        name,
        score,
        fitting,
        records,
    }
}

/// Guess the format of `path` from its content.
pub fn detect(path: &str) -> Result<String> {
    if !Path::new(path).exists() {
        if !blktrace::per_cpu_files(path).is_empty() {
            return Ok("blktrace".into());
        }
        return Err(Error::trace(
            path,
            None,
            "cannot open: no such file (nor per-CPU blktrace files PATH.blktrace.N)",
        ));
    }
    if native::is_native(path)? {
        return Ok(NATIVE.to_string());
    }
    let head = read_head(path)?;
    if head.is_empty() {
        return Err(Error::trace(
            path,
            None,
            "empty file: no line to detect the format from; give --format",
        ));
    }
    if blktrace::is_blktrace(&head) {
        return Ok("blktrace".into());
    }
    if blktrace::is_tar(&head) {
        return if blktrace::tar_members(path)?.is_empty() {
            Err(Error::trace(
                path,
                None,
                "a tar archive without NAME.blktrace.N members: wafer reads tar archives of \
                 blktrace per-CPU files only; unpack it and give one trace file",
            ))
        } else {
            Ok("blktrace".into())
        };
    }
    let cut = head.len() == HEAD_BYTES;
    if let Some(at) = binary_at(&head, cut) {
        return Err(Error::trace(
            path,
            None,
            format!(
                "not a text trace (binary data at byte {at}) and not a binary format wafer \
                 knows (native, blktrace); give --format NAME if it is one of: {}",
                known_formats()
            ),
        ));
    }
    let text = match std::str::from_utf8(&head) {
        Ok(s) => s,
        // a character cut by the byte limit
        Err(e) => std::str::from_utf8(&head[..e.valid_up_to()]).expect("valid prefix"),
    };
    let text = text.trim_start_matches('\u{feff}');
    let mut lines: Vec<&str> = text
        .split('\n')
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .take(SAMPLE_LINES + 1)
        .collect();
    if cut && !text.ends_with('\n') && lines.len() > 1 {
        lines.pop(); // the last line may be cut by the byte limit
    }
    lines.truncate(SAMPLE_LINES);
    if lines.is_empty() {
        return Err(Error::trace(
            path,
            None,
            "only blank or '#' lines at the start: no line to detect the format from; give --format",
        ));
    }
    choose(path, &lines, rank(&lines))
}

/// The winner, or an error that says why there is none.
fn choose(path: &str, lines: &[&str], ranked: Vec<Candidate>) -> Result<String> {
    let best = &ranked[0];
    let n = lines.len();
    if best.score < MIN_SCORE {
        let close: Vec<String> = ranked
            .iter()
            .filter(|c| c.score > 0.0 || c.fitting > 0)
            .take(3)
            .map(|c| {
                format!(
                    "{} {:.2} ({} of {n} lines fit, {} requests)",
                    c.name,
                    c.score,
                    c.fitting,
                    c.records.len()
                )
            })
            .collect();
        let first: String = lines[0].chars().take(120).collect();
        return Err(Error::trace(
            path,
            None,
            format!(
                "no reader for this layout: first line '{first}'{}; formats: {}; give --format \
                 NAME, or map the columns with --format csv:time=0,op=1,offset=2,size=3[,sep=space,\
                 time_unit=ms,offset_unit=sector,...] (`wafer traces formats`)",
                if close.is_empty() {
                    String::new()
                } else {
                    format!(" (closest, score needs {MIN_SCORE}: {})", close.join(", "))
                },
                known_formats()
            ),
        ));
    }
    let rivals: Vec<&Candidate> = ranked[1..]
        .iter()
        .filter(|c| c.score >= MARGIN * best.score && c.records != best.records)
        .collect();
    if rivals.is_empty() {
        return Ok(best.name.to_string());
    }
    let list: Vec<String> = std::iter::once(best)
        .chain(rivals)
        .map(|c| format!("{} {:.2}", c.name, c.score))
        .collect();
    Err(Error::trace(
        path,
        None,
        format!(
            "ambiguous layout: the first {n} lines read plausibly as more than one format \
             (scores: {}; a winner needs at least {MIN_SCORE} and {:.2} times the next); \
             give --format NAME, e.g. --format {}",
            list.join(", "),
            1.0 / MARGIN,
            best.name
        ),
    ))
}

/// Byte offset of the first NUL or invalid UTF-8 in `head` (a character cut
/// at the end of a `cut` head is not invalid).
fn binary_at(head: &[u8], cut: bool) -> Option<usize> {
    let nul = head.iter().position(|&b| b == 0);
    let bad = match std::str::from_utf8(head) {
        Ok(_) => None,
        Err(e) if e.error_len().is_none() && cut => None,
        Err(e) => Some(e.valid_up_to()),
    };
    match (nul, bad) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The first [`HEAD_BYTES`] decompressed bytes of `path`.
fn read_head(path: &str) -> Result<Vec<u8>> {
    let mut head = Vec::with_capacity(64 << 10);
    open(path)?
        .take(HEAD_BYTES as u64)
        .read_to_end(&mut head)
        .map_err(|e| Error::trace(path, None, format!("cannot read: {e}")))?;
    Ok(head)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn best(text: &str) -> Vec<(&'static str, f64)> {
        let lines: Vec<&str> = text.lines().collect();
        rank(&lines)
            .into_iter()
            .filter(|c| c.score > 0.0)
            .map(|c| (c.name, c.score))
            .collect()
    }

    #[test]
    fn byte_sizes_are_not_read_as_sectors() {
        // ts_ms dev offset_B size_B type: as DiskSim's sectors, 4 KiB would be 2 MiB
        let cut = "0.000 0 4923392 4096 1\n0.091 0 13873152 4096 1\n0.652 0 27348992 65536 0\n";
        let s = best(cut);
        assert_eq!(s[0].0, "msr-cut", "{s:?}");
        assert!(s[1].1 < MARGIN * s[0].1, "{s:?}");
        // DiskSim's sector counts read as bytes are 8-byte requests
        let ds = "0.026214 0 303567 8 1\n1.5 2 8 16 0\n2.25 2 1000 128 0\n";
        assert_eq!(best(ds)[0].0, "disksim");
    }

    #[test]
    fn scores_reward_plausible_units() {
        assert_eq!(size_score(4096), 1.0);
        assert!(size_score(4096 * 512) < 1.0 && size_score(65536 * 512) < size_score(4096 * 512));
        assert!(size_score(8) < 0.2);
        assert!(offset_score(303567) < offset_score(303567 * 512));
        assert_eq!(binary_at(b"abc\0", false), Some(3));
        assert_eq!(binary_at(b"ab\xff", false), Some(2));
        assert_eq!(binary_at(b"ab\xc3", true), None, "a cut character");
        assert_eq!(binary_at("é,1\n".as_bytes(), false), None);
    }
}
