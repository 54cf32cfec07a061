//! Text traces inside a tar archive (SNIA ships the FIU traces as a tar of
//! per-day text files): the regular members, in archive order, read as one
//! text, as if unpacked and concatenated. A tar of blktrace per-CPU files is
//! a binary blktrace instead ([`kind`] tells which; [`super::blktrace`]
//! reads those).
//!
//! The archive is walked header by header (POSIX ustar and GNU headers,
//! checksums checked); directories, links, pax and GNU long-name records
//! carry no trace data and are skipped. A member ends with a newline even
//! if its file does not, so two members never share a line.
//!
//! A *cut* archive, such as the first lines of a tar taken with `head` (its
//! first line then starts with the tar header), ends inside a member: what
//! is there is read, up to the last complete line (a line cut by the end is
//! dropped, never read short), and [`Text::cut`] is set so the reading
//! counts say the trace was truncated. A header that is not a tar header
//! (bad checksum) ends the reading the same way.

use std::io::{self, BufRead, BufReader, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::blktrace::{is_per_cpu, is_tar};
use super::compress;
use crate::error::Result;

/// Bytes of a tar header or padding block.
const BLOCK: usize = 512;
/// Member bytes held back waiting for a newline at most: a longer line is
/// passed on whole (the line reader deals with it).
const MAX_HELD: usize = 1 << 20;
/// Bytes read from the archive at once.
const CHUNK: usize = 64 << 10;

/// What a tar archive holds, judged from its first bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A `*.blktrace.N` per-CPU member among the headers in the head.
    Blktrace,
    /// Regular members, none of them per-CPU blktrace files.
    Text,
    /// No regular member starts in the head.
    Unknown,
}

/// One parsed header.
struct Header {
    name: String,
    size: u64,
    regular: bool,
}

/// The header in `b` (one block), `None` if it is not one (bad checksum) or
/// is the zero block that ends an archive.
fn header(b: &[u8]) -> Option<Header> {
    if b.iter().all(|&x| x == 0) {
        return None;
    }
    let stored = octal(&b[148..156])?;
    let sum: u64 = b
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            if (148..156).contains(&i) {
                32
            } else {
                x as u64
            }
        })
        .sum();
    if sum != stored {
        return None;
    }
    let size = if b[124] & 0x80 != 0 {
        // GNU base-256 for members of 8 GiB and more
        b[125..136].iter().fold(0u64, |a, &x| a << 8 | x as u64)
    } else {
        octal(&b[124..136])?
    };
    let text = |f: &[u8]| {
        let end = f.iter().position(|&x| x == 0).unwrap_or(f.len());
        String::from_utf8_lossy(&f[..end]).into_owned()
    };
    let mut name = text(&b[..100]);
    if &b[257..263] == b"ustar\0" && b[345] != 0 {
        name = format!("{}/{name}", text(&b[345..500]));
    }
    Some(Header {
        name,
        size,
        regular: matches!(b[156], b'0' | 0 | b'7'),
    })
}

/// An octal field (NUL- or space-terminated), `None` if it is not one.
fn octal(f: &[u8]) -> Option<u64> {
    let s: Vec<u8> = f
        .iter()
        .copied()
        .skip_while(|&x| x == b' ')
        .take_while(|&x| x != 0 && x != b' ')
        .collect();
    if s.is_empty() {
        return Some(0);
    }
    u64::from_str_radix(std::str::from_utf8(&s).ok()?, 8).ok()
}

fn padded(size: u64) -> u64 {
    size.div_ceil(BLOCK as u64) * BLOCK as u64
}

/// What the tar archive whose first decompressed bytes are `head` holds.
pub fn kind(head: &[u8]) -> Kind {
    let mut at = 0usize;
    let mut text = false;
    while at + BLOCK <= head.len() {
        let Some(h) = header(&head[at..at + BLOCK]) else {
            break;
        };
        if h.regular && h.size > 0 {
            if is_per_cpu(h.name.rsplit('/').next().unwrap_or(&h.name)) {
                return Kind::Blktrace;
            }
            text = true;
        }
        at = match (at as u64 + BLOCK as u64).checked_add(padded(h.size)) {
            Some(next) if next < head.len() as u64 => next as usize,
            _ => break,
        };
    }
    if text {
        Kind::Text
    } else {
        Kind::Unknown
    }
}

/// A trace's text, and whether it came from a cut tar archive.
pub struct Text {
    /// The text (decompressed; a tar's members concatenated).
    pub reader: Box<dyn BufRead + Send>,
    /// Set once the reading met the end of a cut archive (a tar only).
    pub cut: Option<Arc<AtomicBool>>,
}

/// The text of `path`: its decompressed bytes, or the regular members of
/// the tar archive it is.
pub fn open_text(path: &str) -> Result<Text> {
    // A read error here (a cut archive) is the reader's to report, at its line.
    let mut head = Vec::with_capacity(BLOCK);
    let _ = compress::open(path)?
        .take(BLOCK as u64)
        .read_to_end(&mut head);
    let reader = compress::open(path)?;
    if !is_tar(&head) {
        return Ok(Text { reader, cut: None });
    }
    let cut = Arc::new(AtomicBool::new(false));
    let members = Members {
        inner: reader,
        left: 0,
        pad: 0,
        held: Vec::new(),
        out: Vec::new(),
        out_pos: 0,
        done: false,
        cut: Arc::clone(&cut),
    };
    Ok(Text {
        reader: Box::new(BufReader::with_capacity(CHUNK, members)),
        cut: Some(cut),
    })
}

/// The regular members of a tar stream, concatenated.
struct Members<R> {
    inner: R,
    /// Bytes of the current member not read yet, and the padding after it.
    left: u64,
    pad: u64,
    /// Member bytes after the last newline, held until the rest of their
    /// line (or the member's end) comes.
    held: Vec<u8>,
    /// Bytes ready to be passed on, from `out_pos`.
    out: Vec<u8>,
    out_pos: usize,
    done: bool,
    cut: Arc<AtomicBool>,
}

impl<R: Read> Members<R> {
    /// Read up to `n` bytes into a fresh buffer (fewer only at the end).
    fn read_up_to(&mut self, n: usize) -> io::Result<Vec<u8>> {
        let mut buf = Vec::with_capacity(n);
        (&mut self.inner).take(n as u64).read_to_end(&mut buf)?;
        Ok(buf)
    }

    /// Skip the padding of the last member and the headers up to the next
    /// regular member with data; `done` at the end of the archive.
    fn next_member(&mut self) -> io::Result<()> {
        loop {
            let skip = std::mem::take(&mut self.pad);
            if skip > 0 {
                io::copy(&mut (&mut self.inner).take(skip), &mut io::sink())?;
            }
            let block = self.read_up_to(BLOCK)?;
            if block.is_empty() {
                self.done = true;
                return Ok(());
            }
            let parsed = (block.len() == BLOCK).then(|| header(&block)).flatten();
            let Some(h) = parsed else {
                // the zero block that ends the archive, or no tar header
                // (cut or corrupt) where one belongs
                if block.len() < BLOCK || block.iter().any(|&x| x != 0) {
                    self.cut.store(true, Ordering::Relaxed);
                }
                self.done = true;
                return Ok(());
            };
            self.pad = padded(h.size) - h.size;
            if h.regular && h.size > 0 {
                self.left = h.size;
                return Ok(());
            }
            self.pad += h.size;
        }
    }

    /// Read more of the current member into `out`.
    fn read_member(&mut self) -> io::Result<()> {
        let chunk = self.read_up_to(CHUNK.min(self.left as usize))?;
        if chunk.is_empty() {
            // the archive ends inside the member: a cut archive; the line
            // it cuts is dropped
            self.cut.store(true, Ordering::Relaxed);
            self.held.clear();
            self.done = true;
            return Ok(());
        }
        self.left -= chunk.len() as u64;
        self.held.extend_from_slice(&chunk);
        self.out_pos = 0;
        if self.left == 0 {
            self.out = std::mem::take(&mut self.held);
            if self.out.last() != Some(&b'\n') {
                self.out.push(b'\n');
            }
        } else if let Some(k) = self.held.iter().rposition(|&x| x == b'\n') {
            self.out = self.held.drain(..=k).collect();
        } else if self.held.len() > MAX_HELD {
            self.out = std::mem::take(&mut self.held);
        } else {
            self.out.clear();
        }
        Ok(())
    }
}

impl<R: Read> Read for Members<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            if self.out_pos < self.out.len() {
                let n = buf.len().min(self.out.len() - self.out_pos);
                buf[..n].copy_from_slice(&self.out[self.out_pos..self.out_pos + n]);
                self.out_pos += n;
                return Ok(n);
            }
            if self.done {
                return Ok(0);
            }
            if self.left == 0 {
                self.next_member()?;
            } else {
                self.read_member()?;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ustar header for a regular member `name` of `size` bytes.
    fn ustar(name: &str, size: u64, kind: u8) -> Vec<u8> {
        let mut h = vec![0u8; BLOCK];
        h[..name.len()].copy_from_slice(name.as_bytes());
        h[100..107].copy_from_slice(b"0000644");
        h[124..135].copy_from_slice(format!("{size:011o}").as_bytes());
        h[156] = kind;
        h[257..263].copy_from_slice(b"ustar\0");
        h[148..156].copy_from_slice(b"        ");
        let sum: u64 = h.iter().map(|&x| x as u64).sum();
        h[148..155].copy_from_slice(format!("{sum:06o}\0").as_bytes());
        h
    }

    fn archive(members: &[(&str, &[u8])]) -> Vec<u8> {
        let mut out = ustar("dir/", 0, b'5');
        for (name, data) in members {
            out.extend(ustar(name, data.len() as u64, b'0'));
            out.extend_from_slice(data);
            out.resize(padded(out.len() as u64) as usize, 0);
        }
        out.extend(vec![0u8; 2 * BLOCK]);
        out
    }

    fn read_all(bytes: Vec<u8>) -> (String, bool) {
        let cut = Arc::new(AtomicBool::new(false));
        let mut m = Members {
            inner: io::Cursor::new(bytes),
            left: 0,
            pad: 0,
            held: Vec::new(),
            out: Vec::new(),
            out_pos: 0,
            done: false,
            cut: Arc::clone(&cut),
        };
        let mut s = String::new();
        m.read_to_string(&mut s).unwrap();
        (s, cut.load(Ordering::Relaxed))
    }

    #[test]
    fn members_concatenate_and_a_cut_archive_drops_its_cut_line() {
        let a = archive(&[("dir/a.txt", b"1 2\n3 4"), ("dir/b.txt", b"5 6\n")]);
        assert_eq!(kind(&a), Kind::Text);
        assert_eq!(read_all(a.clone()), ("1 2\n3 4\n5 6\n".into(), false));
        // cut inside the first member's second line
        let cut = a[..BLOCK * 2 + 6].to_vec();
        assert_eq!(read_all(cut), ("1 2\n".into(), true));
        // a header that is not one
        let mut bad = a.clone();
        bad[BLOCK * 3 + 10] ^= 0x55;
        assert_eq!(read_all(bad), ("1 2\n3 4\n".into(), true));
    }

    #[test]
    fn blktrace_members_make_a_binary_trace() {
        let a = archive(&[("README", b"x\n"), ("sda.blktrace.0", b"\0\0")]);
        assert_eq!(kind(&a), Kind::Blktrace);
        assert_eq!(kind(&a[..BLOCK]), Kind::Unknown);
        assert_eq!(octal(b"0000644 \0"), Some(0o644));
        assert_eq!(octal(b"12x"), None);
    }
}
