//! The engine's layers point one way (issues 31, 45): a top-level module of
//! `wafer-core/src` imports only modules of its own layer or of the layers
//! below it, in the order `lib.rs`'s module doc declares ([`LAYERS`] holds
//! it and a test holds the two together), and the top-level modules import
//! each other without a cycle.
//!
//! Read from the source itself. An import of the top-level module NAME is
//! any path that starts at the crate root in code: `crate::NAME` (in a
//! `use`, a grouped `use crate::{NAME::x, OTHER}` at any depth of nesting,
//! or inline, `crate::NAME::f()`), `$crate::NAME` in a macro, and a
//! `super::` chain that climbs to the root (`super::NAME` in `src/a/mod.rs`).
//! Comments, string and character literals and unit-test modules (from a
//! `#[cfg(test)] mod` on) are skipped; an inline `mod` inside a file is not
//! followed (its `super::` counts from the file).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, bottom up, as `lib.rs`'s module doc declares them: a module
/// may import its own layer's modules and those of the layers below.
const LAYERS: &[(&str, &[&str])] = &[
    (
        "basics",
        &[
            "error",
            "request",
            "rng",
            "params",
            "interrupt",
            "codec",
            "divisor",
            "prefetch",
            "huge",
            "host",
        ],
    ),
    (
        "inputs",
        &["device", "trace", "workload", "model", "source", "future"],
    ),
    ("ftl", &["ftl", "victim"]),
    ("engine", &["engine"]),
    ("policies", &["features", "policy"]),
    // `preset` lists the timing presets with the device ones (`all_json`).
    ("timing", &["timing", "preset"]),
    ("run", &["run"]),
];

/// Imports of a higher layer that are allowed, each with its reason:
/// (file under `src/`, imported module, reason). Empty: none is.
const ALLOWED: &[(&str, &str, &str)] = &[];

/// One import: the file (under `src/`), its line, the importing top-level
/// module and the imported one.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Import {
    file: String,
    line: usize,
    from: String,
    to: String,
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The top-level modules of the crate (files and folders of `src/` but `lib.rs`).
fn modules() -> BTreeSet<String> {
    let mut modules = BTreeSet::new();
    for entry in std::fs::read_dir(src()).expect("src is readable") {
        let p = entry.expect("a directory entry").path();
        let name = p
            .file_stem()
            .expect("a name")
            .to_string_lossy()
            .into_owned();
        if name != "lib" && (p.is_dir() || p.extension().is_some_and(|e| e == "rs")) {
            modules.insert(name);
        }
    }
    modules
}

/// Every import of one top-level module by another, in file and line order.
fn imports() -> Vec<Import> {
    let src = src();
    let modules = modules();
    let mut files = Vec::new();
    collect(&src, &mut files);
    let mut out = Vec::new();
    for f in files {
        let rel = f.strip_prefix(&src).expect("under src").to_path_buf();
        let mut path: Vec<String> = rel
            .with_extension("")
            .iter()
            .map(|c| c.to_string_lossy().into_owned())
            .collect();
        if path.last().is_some_and(|l| l == "mod") {
            path.pop();
        }
        if path == ["lib"] {
            continue;
        }
        let text = std::fs::read_to_string(&f).expect("a source file is readable");
        for (line, to) in root_paths(&text, path.len()) {
            if to != path[0] && modules.contains(&to) {
                out.push(Import {
                    file: rel.display().to_string(),
                    line,
                    from: path[0].clone(),
                    to,
                });
            }
        }
    }
    out.sort();
    out
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a source folder is readable") {
        let p = entry.expect("a directory entry").path();
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// `text` with its comments and string and character literals blanked
/// (newlines kept, so lines still count).
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to.min(b.len())] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let ident = |i: usize| i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
    let mut i = 0;
    while i < b.len() {
        let rest = &b[i..];
        if rest.starts_with(b"//") {
            let end = rest
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |n| i + n);
            blank(&mut out, i, end);
            i = end;
        } else if rest.starts_with(b"/*") {
            // Block comments nest.
            let (mut depth, mut j) = (0usize, i);
            while j < b.len() {
                if b[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if b[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i, j);
            i = j;
        } else if !ident(i)
            && (rest.starts_with(b"r\"") || rest.starts_with(b"r#") || rest.starts_with(b"br"))
        {
            // Raw strings: r"..", r#".."#, br#".."#.
            let start = i + if rest[0] == b'b' { 2 } else { 1 };
            let hashes = b[start..].iter().take_while(|&&c| c == b'#').count();
            if b.get(start + hashes) != Some(&b'"') {
                i += 1;
                continue;
            }
            let mut close = vec![b'"'];
            close.extend(std::iter::repeat_n(b'#', hashes));
            let body = start + hashes + 1;
            let end = b[body..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(b.len(), |n| body + n + close.len());
            blank(&mut out, i, end);
            i = end;
        } else if rest[0] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            blank(&mut out, i, j + 1);
            i = j + 1;
        } else if rest[0] == b'\'' {
            // A character literal ('x', '\n', '\u{1F600}', '"'), not a lifetime.
            let len = if rest.get(1) == Some(&b'\\') {
                rest.iter().skip(3).position(|&c| c == b'\'').map(|n| n + 4)
            } else {
                let ch = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                (rest.get(1 + ch) == Some(&b'\'')).then_some(ch + 2)
            };
            match len {
                Some(n) => {
                    blank(&mut out, i, i + n);
                    i += n;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    String::from_utf8(out).expect("blanking keeps UTF-8: only ASCII replaces whole literals")
}

/// The top-level modules named by every path from the crate root in
/// `text`'s code, with their lines, for a file `depth` modules deep
/// (`src/a.rs` and `src/a/mod.rs` 1, `src/a/b.rs` 2).
fn root_paths(text: &str, depth: usize) -> Vec<(usize, String)> {
    let code = code_only(text);
    // A unit-test module may reach anywhere: only the code above it counts.
    let code = code
        .match_indices("#[cfg(test)]")
        .find(|(i, m)| code[i + m.len()..].trim_start().starts_with("mod "))
        .map_or(code.as_str(), |(i, _)| &code[..i]);
    let b = code.as_bytes();
    let is_ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let at_word = i == 0 || !is_ident(b[i - 1]);
        let after = if at_word && b[i..].starts_with(b"crate::") {
            Some(i + "crate::".len())
        } else if at_word && b[i..].starts_with(b"super::") && !b[..i].ends_with(b"super::") {
            let mut j = i;
            let mut ups = 0;
            while b[j..].starts_with(b"super::") {
                j += "super::".len();
                ups += 1;
            }
            (ups >= depth).then_some(j)
        } else {
            None
        };
        let Some(start) = after else {
            i += 1;
            continue;
        };
        let line = b[..i].iter().filter(|&&c| c == b'\n').count() + 1;
        for name in first_segments(&code[start..]) {
            out.push((line, name));
        }
        i = start;
    }
    out
}

/// The first segment of the path that starts `rest`, or of each item of the
/// group `{a::b, c, d::{e, f}}` it starts with.
fn first_segments(rest: &str) -> Vec<String> {
    let rest = rest.trim_start();
    let word = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let Some(group) = rest.strip_prefix('{') else {
        return vec![word(rest)]
            .into_iter()
            .filter(|w| !w.is_empty())
            .collect();
    };
    let (mut depth, mut items, mut item_start) = (0usize, Vec::new(), 0);
    for (k, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push(&group[item_start..k]);
                break;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&group[item_start..k]);
                item_start = k + 1;
            }
            _ => {}
        }
    }
    items
        .into_iter()
        .map(word)
        .filter(|w| !w.is_empty() && w != "self")
        .collect()
}

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|(_, ms)| ms.contains(&module))
}

#[test]
fn every_top_level_module_has_one_layer() {
    let listed: Vec<&str> = LAYERS
        .iter()
        .flat_map(|(_, ms)| ms.iter().copied())
        .collect();
    let unique: BTreeSet<&str> = listed.iter().copied().collect();
    assert_eq!(
        unique.len(),
        listed.len(),
        "a module in two layers: {listed:?}"
    );
    let modules = modules();
    let unlisted: Vec<&String> = modules.iter().filter(|m| layer_of(m).is_none()).collect();
    let gone: Vec<&&str> = unique.iter().filter(|m| !modules.contains(**m)).collect();
    assert!(
        unlisted.is_empty() && gone.is_empty(),
        "modules without a layer: {unlisted:?}; layers' modules not in src: {gone:?}"
    );
}

/// The bullets of `lib.rs`'s "Layers, bottom up" list, each the top-level
/// modules it links (`` [`name`] ``) in order.
fn declared_layers() -> Vec<Vec<String>> {
    let lib = std::fs::read_to_string(src().join("lib.rs")).expect("lib.rs is readable");
    let doc: Vec<&str> = lib
        .lines()
        .map_while(|l| l.strip_prefix("//!"))
        .map(str::trim)
        .collect();
    let start = doc
        .iter()
        .position(|l| l.starts_with("Layers, bottom up"))
        .expect("lib.rs declares its layers");
    let modules = modules();
    let mut layers: Vec<Vec<String>> = Vec::new();
    for l in doc[start..].iter().skip(1) {
        if l.is_empty() && !layers.is_empty() {
            break;
        }
        if let Some(bullet) = l.strip_prefix("* ") {
            layers.push(Vec::new());
            scan_links(bullet, &modules, layers.last_mut().expect("a bullet"));
        } else if let Some(layer) = layers.last_mut() {
            scan_links(l, &modules, layer);
        }
    }
    layers
}

fn scan_links(line: &str, modules: &BTreeSet<String>, out: &mut Vec<String>) {
    for part in line.split("[`").skip(1) {
        if let Some(name) = part.split_once("`]").map(|(n, _)| n) {
            if modules.contains(name) {
                out.push(name.to_string());
            }
        }
    }
}

#[test]
fn the_table_is_the_order_lib_rs_declares() {
    let declared = declared_layers();
    let table: Vec<BTreeSet<&str>> = LAYERS
        .iter()
        .map(|(_, ms)| ms.iter().copied().collect())
        .collect();
    let doc: Vec<BTreeSet<&str>> = declared
        .iter()
        .map(|ms| ms.iter().map(String::as_str).collect())
        .collect();
    assert_eq!(
        table, doc,
        "LAYERS (this file) and lib.rs's layer list differ"
    );
}

#[test]
fn no_module_imports_a_higher_layer() {
    let mut upward = Vec::new();
    let mut allowed_seen = BTreeSet::new();
    for i in imports() {
        let (Some(from), Some(to)) = (layer_of(&i.from), layer_of(&i.to)) else {
            continue; // every_top_level_module_has_one_layer names it
        };
        if to <= from {
            continue;
        }
        if let Some(a) = ALLOWED.iter().find(|(f, m, _)| *f == i.file && *m == i.to) {
            allowed_seen.insert(*a);
            continue;
        }
        upward.push(format!(
            "src/{}:{}: {} ({}) imports {} ({})",
            i.file, i.line, i.from, LAYERS[from].0, i.to, LAYERS[to].0
        ));
    }
    assert!(
        upward.is_empty(),
        "imports of a higher layer:\n{}",
        upward.join("\n")
    );
    let stale: Vec<_> = ALLOWED
        .iter()
        .filter(|a| !allowed_seen.contains(a))
        .collect();
    assert!(
        stale.is_empty(),
        "allowed upward imports no longer made: {stale:?}"
    );
}

#[test]
fn the_top_level_modules_import_each_other_without_a_cycle() {
    // module -> imported module -> one place that imports it
    let mut graph: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for i in imports() {
        graph
            .entry(i.from)
            .or_default()
            .entry(i.to)
            .or_insert(format!("src/{}:{}", i.file, i.line));
    }
    // Depth-first search; a module met again on the current path closes a cycle.
    fn visit(
        m: &str,
        graph: &BTreeMap<String, BTreeMap<String, String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == m) {
            let mut cycle = path[i..].to_vec();
            cycle.push(m.to_string());
            return Some(cycle);
        }
        if done.contains(m) {
            return None;
        }
        path.push(m.to_string());
        for next in graph.get(m).into_iter().flat_map(|u| u.keys()) {
            if let Some(c) = visit(next, graph, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(m.to_string());
        None
    }
    let mut done = BTreeSet::new();
    for m in graph.keys() {
        if let Some(cycle) = visit(m, &graph, &mut Vec::new(), &mut done) {
            let steps: Vec<String> = cycle
                .windows(2)
                .map(|w| format!("{} -> {} (in {})", w[0], w[1], graph[&w[0]][&w[1]]))
                .collect();
            panic!("a cycle between top-level modules: {}", steps.join(", "));
        }
    }
}

#[test]
fn the_scanner_reads_grouped_and_inline_paths_and_skips_comments_and_strings() {
    let text = r##"use crate::ftl::Ftl;
use crate::{device::Geometry, engine::{Ctx, Placement}, self};
use crate::{
    policy::{self, kit::{a, b}},
    rng,
};
// crate::run::x
/* crate::timing /* nested */ crate::timing */
fn f() -> u8 { let s = "crate::preset"; let r = r#"crate::trace "x" "#; let q = '"'; $crate::codec::encode(super::model::x(crate::victim::y)) } // crate::sim
fn g<'a>(x: &'a str) -> char { let c = '\''; crate::future::NEVER; c }
#[cfg(test)]
mod tests { use crate::run; }"##;
    let got: BTreeMap<String, usize> = root_paths(text, 1)
        .into_iter()
        .map(|(line, m)| (m, line))
        .collect();
    let want: BTreeMap<String, usize> = [
        ("ftl", 1),
        ("device", 2),
        ("engine", 2),
        ("policy", 3),
        ("rng", 3),
        ("codec", 9),
        ("model", 9),
        ("victim", 9),
        ("future", 10),
    ]
    .into_iter()
    .map(|(m, l)| (m.to_string(), l))
    .collect();
    assert_eq!(got, want);
    // Deeper in: `super::` stays inside the file's own top-level module
    // until the chain reaches the root.
    let nested = "use super::sibling::X;\nuse super::super::engine::Ctx;";
    assert_eq!(root_paths(nested, 2), vec![(2, "engine".to_string())]);
}
