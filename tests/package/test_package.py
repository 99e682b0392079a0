"""The installed distribution: its name, version and licence files."""

from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path

import ferrum

ROOT = Path(__file__).resolve().parents[2]


def test_version_is_the_crates_and_the_distributions() -> None:
    cargo = (ROOT / "Cargo.toml").read_text()
    found = re.search(r'^\[workspace\.package\][^\[]*?^version = "([^"]+)"', cargo, re.M | re.S)
    assert found, "Cargo.toml: no [workspace.package] version"
    assert ferrum.__version__ == found.group(1)
    # "ferrum" on the package registry is another project: ours is ferrum-dl.
    assert importlib.metadata.version("ferrum-dl") == ferrum.__version__


def test_metadata_names_licences_urls_and_keywords() -> None:
    meta = importlib.metadata.metadata("ferrum-dl")
    assert meta["Name"] == "ferrum-dl"
    assert meta["License"] == "MIT OR Apache-2.0"
    assert {"Homepage", "Repository", "Documentation", "Issues", "Changelog"} <= {
        url.split(",")[0].strip() for url in meta.get_all("Project-URL") or []
    }
    assert "deep-learning" in (meta["Keywords"] or "")


def test_licence_files_are_the_ones_the_metadata_names() -> None:
    mit = (ROOT / "LICENSE-MIT").read_text()
    apache = (ROOT / "LICENSE-APACHE").read_text()
    assert mit.startswith("MIT License") and "WITHOUT WARRANTY OF ANY KIND" in mit
    assert "Apache License" in apache and "Version 2.0, January 2004" in apache
    assert "END OF TERMS AND CONDITIONS" in apache
    assert (ROOT / "CHANGELOG.md").read_text().startswith("# Changelog")
