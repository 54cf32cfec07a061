//! The engine's layers point one way (issue 31): no module below the run
//! layer imports it, and the top-level modules of `wafer-core/src` import
//! each other without a cycle. Read from the source itself: a `crate::NAME`
//! path in code (comments and unit-test modules aside) is an import of the
//! top-level module NAME.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Top-level modules of the crate and, for each, the top-level modules its
/// files name in code, with one file that does.
fn module_graph() -> BTreeMap<String, BTreeMap<String, String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut modules = BTreeSet::new();
    for entry in std::fs::read_dir(&src).expect("src is readable") {
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
    let mut graph = BTreeMap::new();
    for m in &modules {
        let mut files = Vec::new();
        let dir = src.join(m);
        if dir.is_dir() {
            collect(&dir, &mut files);
        } else {
            files.push(src.join(format!("{m}.rs")));
        }
        let mut uses: BTreeMap<String, String> = BTreeMap::new();
        for f in files {
            let text = std::fs::read_to_string(&f).expect("a source file is readable");
            for other in crate_paths(&text) {
                if &other != m && modules.contains(&other) {
                    let rel = f.strip_prefix(&src).unwrap_or(&f).display().to_string();
                    uses.entry(other).or_insert(rel);
                }
            }
        }
        graph.insert(m.clone(), uses);
    }
    graph
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

/// The top-level module names of every `crate::NAME` in `text`'s code.
fn crate_paths(text: &str) -> BTreeSet<String> {
    // A unit-test module may reach anywhere: only the code above it counts.
    let code = text
        .match_indices("#[cfg(test)]")
        .find(|(i, m)| text[i + m.len()..].trim_start().starts_with("mod "))
        .map_or(text, |(i, _)| &text[..i]);
    let mut out = BTreeSet::new();
    for line in code.lines() {
        let line = line.trim_start();
        if line.starts_with("//") {
            continue;
        }
        let line = line.split("//").next().unwrap_or(line);
        let mut rest = line;
        while let Some(i) = rest.find("crate::") {
            // `$crate::` in a macro names the crate too.
            let name: String = rest[i + 7..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.insert(name);
            }
            rest = &rest[i + 7..];
        }
    }
    out
}

#[test]
fn nothing_below_the_run_layer_imports_it() {
    let graph = module_graph();
    assert!(graph.contains_key("run"), "the run layer is src/run/");
    let offenders: Vec<String> = graph
        .iter()
        .filter(|(m, _)| m.as_str() != "run")
        .filter_map(|(m, uses)| uses.get("run").map(|f| format!("{m} (in {f})")))
        .collect();
    assert!(
        offenders.is_empty(),
        "modules below the run layer import it: {offenders:?}"
    );
}

#[test]
fn the_top_level_modules_import_each_other_without_a_cycle() {
    let graph = module_graph();
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
fn the_scanner_sees_imports_and_skips_comments() {
    let text = "use crate::ftl::Ftl;\n// crate::run::x\nfn f() { $crate::codec::encode(1) } // crate::sim\n#[cfg(test)]\nmod tests { use crate::run; }";
    let got: Vec<String> = crate_paths(text).into_iter().collect();
    assert_eq!(got, vec!["codec".to_string(), "ftl".to_string()]);
}
