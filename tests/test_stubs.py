"""The type stubs of the extension (python/wafer/_core.pyi) are generated
(``python -m wafer._stubs``) and current."""

import ast

from wafer import _core, _stubs


def test_core_stubs_are_current():
    text = _stubs.generate(_stubs.source_path().read_text())
    assert _stubs.stub_path().read_text() == text, "python/wafer/_core.pyi is stale: run `python -m wafer._stubs`"


def test_the_stubs_name_every_export_with_types():
    tree = ast.parse(_stubs.stub_path().read_text())
    named = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    exported = {n for n in dir(_core) if not n.startswith("_")}
    assert exported == named
    for f in (n for n in tree.body if isinstance(n, ast.FunctionDef)):
        assert f.returns is not None and all(a.annotation is not None for a in f.args.args), f.name


def test_rust_types_map_to_python():
    t = _stubs.py_type
    assert t("&str") == "str" and t("Option<u64>") == "int | None" and t("PyResult<String>") == "str"
    assert t("Vec<Vec<f64>>") == "list[list[float]]"
    assert t("PyResult<(Vec<u64>, Vec<u8>)>") == "tuple[list[int], list[int]]"
    assert t("Option<Py<PyAny>>") == "Any | None" and t("PyResult<Self>", "Simulation") == "Simulation"
