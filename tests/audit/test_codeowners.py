"""CODEOWNERS parsing on GitHub's documented example file and GitLab's sections (no Spark)."""

from __future__ import annotations

import pytest

from subguard.audit import codeowners

# GitHub's "Example of a CODEOWNERS file" (docs: About code owners), its rules in its order
GITHUB = """
# This is a comment.
*       @global-owner1 @global-owner2
*.js    @js-owner #This is an inline comment.
*.go docs@example.com
*.txt @octo-org/octocats
/build/logs/ @doctocat
docs/*  docs@example.com
apps/ @octocat
/docs/ @doctocat
/scripts/ @doctocat @octocat
**/logs @octocat
/apps/ @octocat
/apps/github
"""


@pytest.mark.parametrize(
    ("path", "owners"),
    [
        ("README.md", ("@global-owner1", "@global-owner2")),
        ("src/app.js", ("@js-owner",)),  # a later match wins over `*`
        ("main.go", ("docs@example.com",)),
        ("notes/todo.txt", ("@octo-org/octocats",)),
        ("build/logs/today.log", ("@octocat",)),  # `**/logs` comes after `/build/logs/`: the last match wins
        ("build/logs/deep/x.md", ("@octocat",)),
        ("docs/getting-started.md", ("@doctocat",)),  # `/docs/` is after `docs/*`
        ("scripts/deploy.sh", ("@doctocat", "@octocat")),
        ("deeply/nested/logs/a.txt", ("@octocat",)),
        ("apps/web/index.html", ("@octocat",)),
        ("apps/github/readme.md", ()),  # the last match has no owners: nobody owns it
    ],
)
def test_github_documented_example(path: str, owners: tuple[str, ...]) -> None:
    assert codeowners.parse(GITHUB).owners(path) == owners


def test_single_star_is_direct_children_only() -> None:
    rules = codeowners.parse("docs/*  docs@example.com\n")
    assert rules.owners("docs/getting-started.md") == ("docs@example.com",)
    assert rules.owners("docs/build-app/troubleshooting.md") == ()


def test_unanchored_folder_matches_anywhere() -> None:
    rules = codeowners.parse("apps/ @octocat\n/root-only/ @a\n")
    assert rules.owners("apps/x.py") == rules.owners("lib/apps/x.py") == ("@octocat",)
    assert rules.owners("root-only/x") == ("@a",) and rules.owners("lib/root-only/x") == ()


def test_double_star_and_escapes() -> None:
    rules = codeowners.parse("src/**/consumer.py @pay\n\\#notes @hash\nmy\\ file.txt @space\n")
    assert rules.owners("src/consumer.py") == rules.owners("src/a/b/consumer.py") == ("@pay",)
    assert rules.owners("#notes") == ("@hash",)
    assert rules.owners("my file.txt") == ("@space",)


def test_gitlab_sections_combine_and_default_owners() -> None:
    text = """
* @default
[Backend] @backend-team
app/
app/legacy/ @legacy
^[Docs][2] @writers
*.md
"""
    rules = codeowners.parse(text, ".gitlab/CODEOWNERS")
    assert rules.owners("app/x.py") == ("@default", "@backend-team")
    assert rules.owners("app/legacy/x.py") == ("@default", "@legacy")
    assert rules.owners("app/README.md") == ("@default", "@backend-team", "@writers")


def test_find_prefers_github_folder() -> None:
    files = {"CODEOWNERS": b"* @root\n", ".github/CODEOWNERS": b"* @gh\n"}
    found = codeowners.find(files.get)
    assert found is not None and found.path == ".github/CODEOWNERS" and found.owners("a") == ("@gh",)
    assert codeowners.find({}.get) is None
