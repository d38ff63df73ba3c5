"""The benchmark entry point: discovery of the benchmark modules and the per-section report file."""

from __future__ import annotations

from webarena_gym.benchmarks import run as bench


def test_discovers_the_env_benchmark():
    assert "env" in bench.discover()


def test_report_sections_are_replaced_one_at_a_time(tmp_path):
    out = tmp_path / "benchmarks.md"
    row = {"name": "step median", "value": 12.345, "unit": "ms", "target": "<= 20", "note": "a|b"}
    bench.write_report(out, {"env": bench.render_section("env", [row], "test machine", quick=True)})
    bench.write_report(out, {"other": bench.render_section("other", [], "m2", quick=False, error="boom")})
    text = out.read_text()
    assert text.startswith("# Benchmarks")
    assert "| step median | 12.3 | ms | <= 20 | a\\|b |" in text and "test machine (quick mode)" not in text
    assert "(quick mode) on: test machine." in text and "boom" in text
    out.write_text(out.read_text().replace("<!-- bench:env -->", "## Summary\n\nhand-written\n\n<!-- bench:env -->", 1))
    bench.write_report(out, {"env": bench.render_section("env", [{**row, "value": 9.0}], "m3", quick=False)})
    text = out.read_text()
    assert "| 9 |" in text and "12.3" not in text and "boom" in text  # env replaced, other kept
    assert text.index("hand-written") < text.index("<!-- bench:env -->")  # the summary above the sections stays
    assert text.count("<!-- bench:env -->") == 1


def test_notes_written_after_a_section_stay_with_it_when_sections_are_rewritten(tmp_path):
    out = tmp_path / "benchmarks.md"
    for name in ("env", "local"):
        bench.write_report(out, {name: bench.render_section(name, [], "m1", quick=False)})
    text = out.read_text().replace("<!-- /bench:env -->\n", "<!-- /bench:env -->\n\nWhy env misses.\n\n", 1)
    out.write_text(text + "\nAbout local.\n")
    bench.write_report(out, {"env": bench.render_section("env", [], "m2", quick=False)})
    bench.write_report(out, {"local": bench.render_section("local", [], "m3", quick=False)})
    text = out.read_text()
    assert "m2" in text and "m3" in text and "m1" not in text
    assert text.index("<!-- /bench:env -->") < text.index("Why env misses.") < text.index("<!-- bench:local -->")
    assert text.index("<!-- /bench:local -->") < text.index("About local.")


def test_the_summary_survives_a_header_written_by_an_older_runner(tmp_path):
    out = tmp_path / "benchmarks.md"
    out.write_text(
        "# Benchmarks\n\nWritten by an older runner.\n\n## Targets\n\nkept\n\n"
        "<!-- bench:env -->\nold\n<!-- /bench:env -->\n"
    )
    bench.write_report(out, {"env": bench.render_section("env", [], "m", quick=True)})
    text = out.read_text()
    assert text.startswith(bench._HEADER) and "## Targets\n\nkept" in text and "older runner" not in text


def test_a_quick_run_never_overwrites_a_section_measured_in_full(tmp_path):
    out = tmp_path / "benchmarks.md"
    full = {"name": "ppo success", "value": 0.9, "unit": "", "target": "", "note": "full"}
    quick = {**full, "value": 0.1, "note": "quick"}
    bench.write_report(out, {"rl": bench.render_section("rl", [full], "m", quick=False)})
    assert bench.write_report(out, {"rl": bench.render_section("rl", [quick], "m", quick=True)}) == ["rl"]
    assert "| full |" in out.read_text() and "| quick |" not in out.read_text()
    assert bench.write_report(out, {"rl": bench.render_section("rl", [quick], "m", quick=False)}) == []
    assert "| quick |" in out.read_text()  # a full run replaces it


def test_the_conformance_rows_name_missed_tasks_with_runs_as_ranges():
    from webarena_gym.benchmarks.conformance import _ids

    assert _ids([97, 20, 93, 95, 94, 22, 96]) == "20, 22, 93-97"
    assert _ids([5]) == "5"
