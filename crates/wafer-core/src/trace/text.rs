//! [`TextRecords`]: records of a text trace, read line by line with one
//! [`LineFormat`], with the defined behaviours for odd lines.

use std::io::{BufRead, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::{detect, line_format, tartext, LineFormat, ReadStats, Record, RecordSource};
use crate::error::{Error, Result};

/// The longest line a text trace may have [bytes]: real traces' lines are
/// a few hundred bytes; a longer one is a binary file or a wrong file, and
/// reading it whole could take all memory (a file without a newline).
pub const MAX_LINE_BYTES: u64 = 1 << 20;

/// Records from a text file.
pub struct TextRecords {
    file: String,
    /// The format's name, for messages.
    name: String,
    reader: Box<dyn BufRead + Send>,
    /// Set when a tar archive's reading met its cut end.
    cut: Option<Arc<AtomicBool>>,
    format: Box<dyn LineFormat>,
    buf: Vec<u8>,
    skip_bad: bool,
    stats: ReadStats,
    /// Lines that are neither blank nor `#` comments.
    content_lines: u64,
    /// Records returned so far.
    records: u64,
    done: bool,
}

impl TextRecords {
    /// Open `path` (decompressing as needed; a tar archive's members read
    /// as one text) as format `format`.
    pub fn open(path: &str, format: &str, skip_bad: bool) -> Result<Self> {
        let parser = line_format(format)?;
        let text = tartext::open_text(path)?;
        Ok(TextRecords {
            file: path.to_string(),
            name: format.to_string(),
            reader: text.reader,
            cut: text.cut,
            format: parser,
            buf: Vec::with_capacity(256),
            skip_bad,
            stats: ReadStats::default(),
            content_lines: 0,
            records: 0,
            done: false,
        })
    }

    fn bad(&mut self, reason: String) -> Result<()> {
        if self.skip_bad {
            self.stats.skipped_bad += 1;
            Ok(())
        } else {
            Err(Error::trace(&self.file, Some(self.stats.lines), reason))
        }
    }

    /// Skip the rest of an overlong line (`--skip-bad`), holding none of it.
    fn skip_line(&mut self) -> Result<()> {
        loop {
            let (found, used) = {
                let chunk = match self.reader.fill_buf() {
                    Ok(c) => c,
                    Err(e) => {
                        return Err(Error::trace(
                            &self.file,
                            Some(self.stats.lines),
                            e.to_string(),
                        ))
                    }
                };
                if chunk.is_empty() {
                    return Ok(());
                }
                match chunk.iter().position(|&b| b == b'\n') {
                    Some(i) => (true, i + 1),
                    None => (false, chunk.len()),
                }
            };
            self.reader.consume(used);
            if found {
                return Ok(());
            }
        }
    }

    /// The end of the file: an error if lines were read but none was a
    /// request of the format (a wrong `--format` must not replay nothing).
    #[cold]
    fn end(&mut self) -> Result<Option<Record>> {
        self.done = true;
        self.stats.unkept_events = self.format.unkept_events();
        if self.cut.as_ref().is_some_and(|c| c.load(Ordering::Relaxed)) {
            self.stats.truncated = true;
        }
        if self.content_lines == 0 || self.records > 0 {
            return Ok(None);
        }
        let skipped = match self.stats.skipped_bad {
            0 => String::new(),
            n => format!(" ({n} skipped as malformed)"),
        };
        Err(Error::trace(
            &self.file,
            None,
            format!(
                "{} lines read{skipped}, none is a '{}' request: wrong --format? {}",
                self.content_lines,
                self.name,
                match detect::suggest(&self.file) {
                    s if s.is_empty() => "(leave --format out to detect the layout; `wafer \
                                          traces formats` lists them)"
                        .to_string(),
                    s => format!("({s})"),
                }
            ),
        ))
    }
}

impl RecordSource for TextRecords {
    fn next_record(&mut self) -> Result<Option<Record>> {
        while !self.done {
            self.buf.clear();
            match (&mut self.reader)
                .take(MAX_LINE_BYTES + 1)
                .read_until(b'\n', &mut self.buf)
            {
                Ok(0) => return self.end(),
                Ok(n) if n as u64 > MAX_LINE_BYTES => {
                    self.stats.lines += 1;
                    self.content_lines += 1;
                    self.bad(format!(
                        "longer than {} MiB without a line break: a binary file, or not a \
                         trace?",
                        MAX_LINE_BYTES >> 20
                    ))?;
                    self.skip_line()?;
                    continue;
                }
                Ok(_) => {}
                Err(e) => {
                    self.done = true;
                    let reason = format!(
                        "reading stopped after line {}: {e} (truncated or corrupt file?)",
                        self.stats.lines
                    );
                    if self.skip_bad {
                        self.stats.truncated = true;
                        return Ok(None);
                    }
                    return Err(Error::trace(&self.file, None, reason));
                }
            }
            self.stats.lines += 1;
            let line = match std::str::from_utf8(&self.buf) {
                Ok(s) => s.trim_start_matches('\u{feff}').trim(),
                Err(e) => {
                    self.content_lines += 1;
                    let at = e.valid_up_to();
                    self.bad(format!(
                        "not UTF-8 text (binary data at byte {at} of the line): \
                         a binary file, or the wrong --format?"
                    ))?;
                    continue;
                }
            };
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            self.content_lines += 1;
            match self.format.parse(line) {
                Ok(Some(r)) => {
                    self.records += 1;
                    return Ok(Some(r));
                }
                Ok(None) => {
                    self.stats.unkept_events = self.format.unkept_events();
                    self.stats.load_end = self.format.load_end();
                }
                Err(reason) => self.bad(reason)?,
            }
        }
        Ok(None)
    }

    fn stats(&self) -> &ReadStats {
        &self.stats
    }
}
