"""Fuzz every extractor through `scan_files` with in-memory files: mutated real fixtures, random
bytes, and generated Python / Java / Spring / manifest sources. Properties: nothing escapes, no
extractor hits an internal error, every file is accounted for exactly once with a reason."""

from __future__ import annotations

import io
import string

from hypothesis import given
from hypothesis import strategies as st
from ruamel.yaml import YAML

from tests.fuzz.harness import FUZZ, SEEDS, assert_accounted, mutated, scan_memory

SEED_PATHS = sorted(SEEDS)
KINDS = {
    "python": [p for p in SEED_PATHS if p.endswith(".py")],
    "java": [p for p in SEED_PATHS if p.endswith(".java")],
    "yaml": [p for p in SEED_PATHS if p.endswith((".yml", ".yaml"))],
    "other": [p for p in SEED_PATHS if not p.endswith((".py", ".java", ".yml", ".yaml"))],
}


def test_seeds_cover_every_extractor() -> None:
    assert all(len(paths) >= 2 for paths in KINDS.values()), {k: len(v) for k, v in KINDS.items()}
    assert any("Dockerfile" in p for p in SEED_PATHS) and any(p.endswith(".properties") for p in SEED_PATHS)


@st.composite
def mutated_seed(draw: st.DrawFn, kind: str | None = None) -> tuple[str, bytes]:
    path = draw(st.sampled_from(KINDS[kind] if kind else SEED_PATHS))
    return path, draw(mutated(SEEDS[path]))


@FUZZ
@given(mutated_seed())
def test_mutated_fixture_alone(case: tuple[str, bytes]) -> None:
    path, data = case
    files = {path: data}
    assert_accounted(files, scan_memory(files))


@FUZZ
@given(
    st.sampled_from(["python", "java", "yaml", "other"]).flatmap(
        lambda k: st.lists(mutated_seed(k), min_size=2, max_size=4)
    )
)
def test_mutated_fixtures_together(cases: list[tuple[str, bytes]]) -> None:
    """Several files of one language, so cross-file linking (constants, imports, config) runs on broken input."""
    files = dict(cases)
    assert_accounted(files, scan_memory(files))


NAMES = st.sampled_from(
    [
        "app/x.py",
        "src/main/java/a/B.java",
        "src/main/resources/application.yml",
        "application-dev.properties",
        "deploy/k8s.yaml",
        "docker-compose.yml",
        "Dockerfile",
        "chart/values.yaml",
        "chart/templates/d.yaml",
        "bootstrap.yaml",
    ]
)
RM_BYTES = st.lists(
    st.sampled_from([b"rocketmq ", b"RocketMQ ", b"{{ x }}", b"FROM a\n", b"-D", b"\n", b"\x00"]), max_size=4
)


@FUZZ
@given(NAMES, st.binary(max_size=2048), RM_BYTES)
def test_random_bytes(path: str, noise: bytes, marks: list[bytes]) -> None:
    files = {path: b"".join(marks) + noise}
    assert_accounted(files, scan_memory(files))


# ---- generated sources ---------------------------------------------------------------------------

IDENT = st.text(string.ascii_letters + "_", min_size=1, max_size=8).filter(
    lambda s: s not in {"if", "in", "is", "or", "as", "def", "for", "not", "and"}
)
ODD_TEXT = st.text(
    st.characters(codec="utf-8", exclude_categories=["Cs"]) | st.sampled_from(list("*|| &'\"\\${}#:%\n\t")), max_size=24
)
PY_EXPR = st.recursive(
    st.one_of(
        ODD_TEXT.map(repr),
        IDENT,
        st.integers().map(str),
        st.just("None"),
        st.sampled_from(["os.getenv('G', 'd')", "f'{X}-g'", "CONST"]),
    ),
    lambda inner: st.one_of(
        st.tuples(inner, inner).map(lambda t: f"{t[0]} + {t[1]}"),
        inner.map(lambda e: f"({e})"),
        st.tuples(inner, inner).map(lambda t: f"'%s-%s' % ({t[0]}, {t[1]})"),
        st.lists(inner, max_size=3).map(lambda xs: f"'.'.join([{', '.join(xs)}])"),
        inner.map(lambda e: f"str({e}).upper()"),
    ),
    max_leaves=12,
)


@st.composite
def python_source(draw: st.DrawFn) -> str:
    header = draw(
        st.sampled_from(
            [
                "from rocketmq.client import PushConsumer, PullConsumer\n",
                "from rocketmq import SimpleConsumer, FilterExpression\n",
                "import rocketmq.client as rc\nPushConsumer = rc.PushConsumer\n",
                "from rocketmq.client import *\n",
            ]
        )
    )
    lines = [header, "import os\n", f"CONST = {draw(PY_EXPR)}\n"]
    for i in range(draw(st.integers(0, 4))):
        var = f"c{i}"
        cls = draw(st.sampled_from(["PushConsumer", "PullConsumer", "SimpleConsumer", "rc.PushConsumer", "Unknown"]))
        lines.append(f"{var} = {cls}({draw(PY_EXPR)})\n")
        for _ in range(draw(st.integers(0, 3))):
            call = draw(
                st.sampled_from(
                    [
                        f"{var}.subscribe({{}}, print)\n",
                        f"{var}.subscribe({{}}, print, expression={{}})\n",
                        f"{var}.subscribe({{{{ {{}}: FilterExpression({{}}) }}}})\n",
                        f"{var}.set_message_model({{}})\n",
                        f"{var}.set_name_server_address({{}})\n",
                        f"{var}.set_instance_name({{}})\n",
                    ]
                )
            )
            args = [draw(PY_EXPR) for _ in range(call.count("{}"))]
            lines.append(call.format(*args))
    if draw(st.booleans()):
        lines.insert(2, "def make(g=CONST):\n    return PushConsumer(g)\nc9 = make()\nc9.subscribe(CONST, print)\n")
    return "".join(lines)


@FUZZ
@given(python_source(), st.booleans())
def test_generated_python(source: str, split: bool) -> None:
    files = {"svc/consumer.py": source.encode()}
    if split:  # the constant moves to an imported module: cross-module resolution on generated values
        files = {
            "svc/__init__.py": b"",
            "svc/consts.py": source.encode(),
            "svc/consumer.py": b"from svc.consts import *\nfrom rocketmq.client import PushConsumer\nPushConsumer(CONST).subscribe(CONST, print)\n",
        }
    assert_accounted(files, scan_memory(files))


JAVA_EXPR = st.recursive(
    st.one_of(
        ODD_TEXT.map(lambda s: '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'),
        IDENT,
        st.sampled_from(["Consts.G", "G", '"${rocketmq.consumer.group:g}"', '"${x}"', "this.g", "null"]),
    ),
    lambda inner: st.one_of(
        st.tuples(inner, inner).map(lambda t: f"{t[0]} + {t[1]}"),
        inner.map(lambda e: f"({e})"),
        inner.map(lambda e: f"String.valueOf({e})"),
    ),
    max_leaves=8,
)


@st.composite
def java_source(draw: st.DrawFn) -> str:
    g, t, sel = draw(JAVA_EXPR), draw(JAVA_EXPR), draw(JAVA_EXPR)
    body = draw(
        st.sampled_from(
            [
                (
                    f"@RocketMQMessageListener(consumerGroup = {g}, topic = {t}, selectorExpression = {sel}, messageModel = MessageModel.BROADCASTING)\n"
                    "public class L implements RocketMQListener<String> { public void onMessage(String m) {} }\n"
                ),
                (
                    "public class C { void run() throws Exception {\n"
                    f"  DefaultMQPushConsumer c = new DefaultMQPushConsumer({g});\n  c.subscribe({t}, {sel});\n"
                    "  c.setMessageModel(MessageModel.CLUSTERING);\n  c.start();\n} }\n"
                ),
                (
                    "public class P { void run() {\n"
                    f"  PushConsumer c = provider.newPushConsumerBuilder().setConsumerGroup({g})\n"
                    f"    .setSubscriptionExpressions(Collections.singletonMap({t}, new FilterExpression({sel}, FilterExpressionType.TAG))).build();\n"
                    "} }\n"
                ),
            ]
        )
    )
    consts = f"class Consts {{ static final String G = {draw(JAVA_EXPR)}; }}\n" if draw(st.booleans()) else ""
    return (
        "package a;\nimport org.apache.rocketmq.client.consumer.*;\nimport org.apache.rocketmq.spring.annotation.*;\n"
        + consts
        + body
    )


@FUZZ
@given(java_source(), mutated(b"rocketmq:\n  consumer:\n    group: g\n    topic: t\n"))
def test_generated_java_with_config(source: str, config: bytes) -> None:
    files = {
        "src/main/java/a/L.java": source.encode(),
        "src/main/resources/application.yml": config,
        "pom.xml": b"<project/>",
    }
    assert_accounted(files, scan_memory(files))


YAML_SCALAR = st.one_of(
    ODD_TEXT,
    st.integers(),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=True),
    st.sampled_from(["${a:b}", "*", "a || b", "TAG", "SQL92", "BROADCASTING"]),
)
SPRING_KEYS = st.sampled_from(
    [
        "rocketmq",
        "consumer",
        "group",
        "topic",
        "selector-expression",
        "message-model",
        "name-server",
        "spring",
        "cloud",
        "stream",
        "bindings",
        "input",
        "destination",
        "consumer-group",
        "rocketmq.binder",
        "profiles",
        "config",
        "activate",
        "on-profile",
        "push-consumer",
        "subscription",
        "[a.b]",
        "env",
        "name",
        "value",
        "containers",
        "volumeMounts",
    ]
)
YAML_TREE = st.recursive(
    YAML_SCALAR,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(SPRING_KEYS | ODD_TEXT, inner, max_size=5)),
    max_leaves=25,
)


def _dump(docs: list[object]) -> bytes:
    out = io.StringIO()
    YAML(typ="safe", pure=True).dump_all(docs, out)
    return out.getvalue().encode("utf-8", "surrogatepass")


@FUZZ
@given(
    st.lists(YAML_TREE, min_size=1, max_size=3),
    st.sampled_from(
        ["application.yml", "application-prod.yaml", "deploy/app.yaml", "docker-compose.yml", "chart/values.yaml"]
    ),
)
def test_generated_yaml(docs: list[object], path: str) -> None:
    files = {path: _dump(docs)}
    assert_accounted(files, scan_memory(files))


@FUZZ
@given(st.lists(st.tuples(SPRING_KEYS | ODD_TEXT, ODD_TEXT, st.sampled_from(["=", ":", " ", "\\\n  "])), max_size=10))
def test_generated_properties(entries: list[tuple[str, str, str]]) -> None:
    text = "".join(f"{k}{sep}{v}\n" for k, sep, v in entries)
    files = {"src/main/resources/application.properties": text.encode("utf-8", "surrogatepass")}
    assert_accounted(files, scan_memory(files))


@FUZZ
@given(mutated_seed())
def test_broken_file_does_not_change_another_files_results(case: tuple[str, bytes]) -> None:
    """Isolation: a good consumer gives the same records whatever broken file sits next to it."""
    good = {"good/app/consumer.py": SEEDS["hostile/app/good_consumer.py"]}
    alone = scan_memory(good)
    path, data = case
    together = scan_memory({**good, f"zz/{path}": data})
    assert [r for r in together.files if r.path in good] == list(alone.files)
    mine = [c for c in together.consumers if c.location.path in good]
    assert [c.model_dump() for c in mine] == [c.model_dump() for c in alone.consumers]
