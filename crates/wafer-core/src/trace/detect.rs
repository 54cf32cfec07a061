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
//! `ssdsim`) are one reading; the first registered is named. Readings that
//! differ only in their times (`vscsi` in seconds, `vscsi-us` in
//! microseconds) are told apart by how plausible the times are
//! ([`time_plausibility`]): the more plausible one wins, a tie is ambiguous.
//! Variants whose name has a `:` (`csv:KEYS`, `blkparse:Q`) are never guessed,
//! with one exception: a blkparse sample whose issue (`D`) events are fewer
//! than [`MIN_ISSUE_SHARE`] of its queue (`Q`) events is read from the queue
//! events (`blkparse:Q`; a stacked or remapped device issues elsewhere).
//!
//! The winner must score at least [`MIN_SCORE`] and its nearest different
//! reading less than [`MARGIN`] times its score. A tar archive is opened:
//! blktrace per-CPU members make it a binary blktrace, other members are
//! read as one text ([`super::tartext`]). Other binary input is recognised
//! by magic (native Arrow, blktrace events) or refused as "not a text
//! trace". Every refusal names the closest layouts and the `--format` that
//! reads them ([`suggest`]).

use std::io::Read;
use std::path::Path;

use super::{
    blkparse, blktrace, known_formats, native, open, tartext, Reader, Record, FORMATS, NATIVE,
};
use crate::error::{Error, Result};

/// Lines read for detection.
pub const SAMPLE_LINES: usize = 200;
/// Bytes of the (decompressed) file read for detection at most.
pub const HEAD_BYTES: usize = 256 << 10;
/// Lowest score a detected layout may have.
pub const MIN_SCORE: f64 = 0.5;
/// The runner-up must score below this fraction of the winner.
pub const MARGIN: f64 = 0.8;
/// A blkparse sample with fewer issue (`D`) events than this share of its
/// queue (`Q`) events is read from the queue events.
pub const MIN_ISSUE_SHARE: f64 = 0.1;
/// Times past this are implausible as a trace's clock [ns since the epoch
/// of 1970: the year 2100].
const LATEST_PLAUSIBLE_NS: u64 = 4_102_444_800_000_000_000;
/// A sample whose requests are closer than this on average is implausibly
/// dense (over 500,000 requests per second sustained) [ns].
const DENSEST_PLAUSIBLE_GAP_NS: u64 = 2_000;
/// A sample whose requests are further apart than this on average is
/// implausibly sparse (its 200 lines would span over 5 hours) [ns]. With
/// the densest gap, a time column read in seconds or in microseconds is
/// told apart unless its mean gap is 2 to 100 units: then both readings
/// are plausible and detection asks.
const SPARSEST_PLAUSIBLE_GAP_NS: u64 = 100_000_000_000;

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
        .map(|c| match c.name {
            "blkparse" => queue_events_if_few_issues(c, lines),
            _ => c,
        })
        .collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score));
    out
}

/// The queue-event reading of a blkparse sample (`blkparse:Q`) when its
/// issue events are fewer than [`MIN_ISSUE_SHARE`] of its queue events,
/// else `issue` (the `D` reading) unchanged.
fn queue_events_if_few_issues(issue: Candidate, lines: &[&str]) -> Candidate {
    let queue = score("blkparse:Q", &blkparse::Blkparse::new("Q"), lines);
    if (issue.records.len() as f64) < MIN_ISSUE_SHARE * queue.records.len() as f64 {
        queue
    } else {
        issue
    }
}

/// How plausible the times of a reading are, 0..=1: times past the year
/// 2100, or requests denser than 500,000 per second or sparser than one in
/// 100 s on average, are implausible (a time column read in the wrong unit).
/// A sample whose times do not move (a coarse clock) says nothing.
pub fn time_plausibility(records: &[Record]) -> f64 {
    let (Some(lo), Some(hi)) = (
        records.iter().map(|r| r.time_ns).min(),
        records.iter().map(|r| r.time_ns).max(),
    ) else {
        return 1.0;
    };
    if hi > LATEST_PLAUSIBLE_NS {
        return 0.3;
    }
    if records.len() < 2 || hi == lo {
        return 1.0;
    }
    let gap = (hi - lo) / (records.len() as u64 - 1);
    if gap < DENSEST_PLAUSIBLE_GAP_NS {
        0.3
    } else if gap > SPARSEST_PLAUSIBLE_GAP_NS {
        0.5
    } else {
        1.0
    }
}

/// Whether two readings are the same requests with other times (one time
/// column read in two units).
fn same_but_time(a: &Candidate, b: &Candidate) -> bool {
    a.records.len() == b.records.len()
        && a.records
            .iter()
            .zip(&b.records)
            .all(|(x, y)| (x.device, x.op, x.offset, x.size) == (y.device, y.op, y.offset, y.size))
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
    if super::hpsrt::is_hpsrt(&head) {
        return Ok("hpsrt".into());
    }
    let head = if blktrace::is_tar(&head) {
        match tartext::kind(&head) {
            tartext::Kind::Blktrace => return Ok("blktrace".into()),
            tartext::Kind::Text => read_text_head(path)?,
            tartext::Kind::Unknown if !blktrace::tar_members(path)?.is_empty() => {
                return Ok("blktrace".into())
            }
            tartext::Kind::Unknown => read_text_head(path)?,
        }
    } else {
        head
    };
    if head.is_empty() {
        return Err(Error::trace(
            path,
            None,
            "a tar archive without a non-empty member: no line to detect the format from",
        ));
    }
    let cut = head.len() == HEAD_BYTES;
    if let Some(at) = binary_at(&head, cut) {
        return Err(Error::trace(
            path,
            None,
            format!(
                "not a text trace (binary data at byte {at}) and not a binary format wafer \
                 knows (native, blktrace, hpsrt); give --format NAME if it is one of: {}",
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
        let first: String = lines[0].chars().take(120).collect();
        return Err(Error::trace(
            path,
            None,
            format!(
                "no reader for this layout: first line '{first}'; {}",
                advice(lines, &ranked)
            ),
        ));
    }
    let close: Vec<&Candidate> = ranked
        .iter()
        .filter(|c| c.score >= MARGIN * best.score)
        .collect();
    // Of the readings that differ from the best only in their times, the
    // one with the most plausible times (the first of equals).
    let winner = close
        .iter()
        .copied()
        .filter(|c| same_but_time(c, best))
        .fold(best, |w, c| {
            if time_plausibility(&c.records) > time_plausibility(&w.records) {
                c
            } else {
                w
            }
        });
    let plausible = time_plausibility(&winner.records);
    let rivals: Vec<&Candidate> = close
        .into_iter()
        .filter(|c| c.records != winner.records)
        .filter(|c| !(same_but_time(c, winner) && time_plausibility(&c.records) < plausible))
        .collect();
    if rivals.is_empty() {
        return Ok(winner.name.to_string());
    }
    let list: Vec<String> = std::iter::once(winner)
        .chain(rivals)
        .map(|c| format!("--format {} (score {:.2})", c.name, c.score))
        .collect();
    Err(Error::trace(
        path,
        None,
        format!(
            "ambiguous layout: the first {n} lines read plausibly as more than one format: {} \
             (a winner needs a score of at least {MIN_SCORE} and {:.2} times the next); give one",
            list.join(", "),
            1.0 / MARGIN,
        ),
    ))
}

/// What would read `lines`: the closest layouts with the `--format` flag
/// that reads them, and a column map for any other delimited layout (named
/// from a header line when it has one).
fn advice(lines: &[&str], ranked: &[Candidate]) -> String {
    let n = lines.len();
    let close: Vec<String> = ranked
        .iter()
        .filter(|c| c.score > 0.0 || c.fitting > 0)
        .take(3)
        .map(|c| {
            format!(
                "--format {} (score {:.2}: {} of {n} lines fit, {} requests)",
                c.name,
                c.score,
                c.fitting,
                c.records.len()
            )
        })
        .collect();
    let closest = if close.is_empty() {
        "no layout reads any of the first lines".to_string()
    } else {
        format!(
            "closest layouts (a guess needs a score of {MIN_SCORE}): {}",
            close.join(", ")
        )
    };
    let map = column_map_guess(lines[0]).unwrap_or_else(|| {
        "--format csv:time=0,op=1,offset=2,size=3[,sep=space,time_unit=ms,offset_unit=sector,...]"
            .to_string()
    });
    format!(
        "{closest}; for another delimited layout map its columns, e.g. {map} (`wafer traces \
         formats` lists the layouts: {})",
        known_formats()
    )
}

/// A column map read off a header line that names the columns (`time`,
/// `op`, `offset`, `size`, `device` by their usual names), if it does.
fn column_map_guess(header: &str) -> Option<String> {
    let (sep, name) = if header.contains(',') {
        (',', "comma")
    } else if header.contains('\t') {
        ('\t', "tab")
    } else if header.contains(';') {
        (';', "semicolon")
    } else {
        (' ', "space")
    };
    let cols: Vec<String> = header
        .split(sep)
        .filter(|c| sep != ' ' || !c.is_empty())
        .map(|c| c.trim().trim_matches('"').to_ascii_lowercase())
        .collect();
    let find = |names: &[&str]| {
        cols.iter()
            .position(|c| names.iter().any(|n| c.contains(n)))
    };
    let time = find(&["time", "ts"])?;
    let op = find(&["op", "type", "rw", "kind", "cmd", "action"])?;
    let offset = find(&["offset", "lba", "lbn", "sector", "blkno", "address", "addr"])?;
    let size = find(&["size", "length", "len", "bytes", "nsectors", "count"])?;
    let mut map = format!("--format csv:time={time},op={op},offset={offset},size={size}");
    if let Some(d) = find(&["device", "volume", "disk", "dev"]) {
        map += &format!(",device={d}");
    }
    if name != "comma" {
        map += &format!(",sep={name}");
    }
    Some(map + ",header=1,time_unit=...,offset_unit=...")
}

/// The closest layouts to the start of `path` and the `--format` that
/// reads them, for an error about a format that reads none of its lines.
pub fn suggest(path: &str) -> String {
    let Ok(head) = read_text_head(path) else {
        return String::new();
    };
    let text = String::from_utf8_lossy(&head);
    let lines: Vec<&str> = text
        .split('\n')
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .take(SAMPLE_LINES)
        .collect();
    if lines.is_empty() {
        return String::new();
    }
    let ranked = rank(&lines);
    match ranked.first() {
        Some(best) if best.score >= MIN_SCORE => format!(
            "detection reads it as --format {} (score {:.2})",
            best.name, best.score
        ),
        _ => advice(&lines, &ranked),
    }
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

/// The first [`HEAD_BYTES`] of `path`'s text: its decompressed bytes, or
/// the content of its members if it is a tar archive.
fn read_text_head(path: &str) -> Result<Vec<u8>> {
    let mut head = Vec::with_capacity(64 << 10);
    tartext::open_text(path)?
        .reader
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
