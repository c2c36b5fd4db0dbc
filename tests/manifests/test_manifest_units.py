"""Pure pieces: JVM option parsing, environment/cluster model, offset directory and client id, linking."""

from __future__ import annotations

from subguard.core.config import Config, EnvironmentSpec, ServiceSpec
from subguard.core.model import ClientFamily, Consumer, Deployment, Location, Mount, Resolution, Value
from subguard.deploy import jvm_options as jvm
from subguard.deploy.environment import canonical, classify, cluster_of, environment_of, name_from_path
from subguard.deploy.link import link
from subguard.deploy.manifest_values import image_name
from subguard.deploy.offset_store import client_id, offset_dir


def consumer(
    cid: str = "c1",
    *,
    model: str = "BROADCASTING",
    client: ClientFamily = ClientFamily.JAVA_PUSH_4X,
    service: str = "repo",
    path: str = "app/Main.java",
    **kw: object,
) -> Consumer:
    return Consumer(
        consumer_id=cid,
        group=Value.literal("g"),
        message_model=Value.literal(model),
        client=client,
        service=service,
        repo="repo",
        location=Location(path=path, line=3),
        **kw,
    )  # type: ignore[arg-type]


def deployment(
    kind: str = "Deployment",
    *,
    mounts: tuple[Mount, ...] = (),
    options: tuple[tuple[str, str], ...] = (),
    env: tuple[tuple[str, str], ...] = (),
    ip: str = "pod-ip",
    **kw: object,
) -> Deployment:
    base: dict[str, object] = {
        "deployment_id": f"k8s/a.yaml#{kind}/app/app",
        "service": "repo",
        "kind": kind,
        "name": "app",
        "repo": "repo",
        "jvm_options": options,
        "env": env,
        "mounts": mounts,
        "client_ip": Value(value=ip, resolution=Resolution.DEFAULT),
        "location": Location(path="k8s/a.yaml", line=9),
    }
    base.update(kw)
    return Deployment(**base)  # type: ignore[arg-type]


PVC = Mount(path="/offsets", volume="o", volume_kind="persistentVolumeClaim", persistent=True)
EMPTY = Mount(path="/offsets", volume="o", volume_kind="emptyDir", persistent=False)
DIR = (("rocketmq.client.localOffsetStoreDir", "/offsets"),)


def test_jvm_options() -> None:
    assert jvm.options_from_text("-Xmx1g -Da=1 '-Db=two words' -Dflag") == [
        ("a", "1"),
        ("b", "two words"),
        ("flag", ""),
    ]
    assert jvm.d_options(["sh", "-c", "exec java -Dx=1 -jar a.jar"]) == [("x", "1")]
    assert jvm.options_from_text('-Da="unclosed') == [("a", '"unclosed')]  # bad quoting: whitespace split
    env = (("JAVA_OPTS", "-Dz=3"), ("JAVA_TOOL_OPTIONS", "-Dz=1"), ("JDK_JAVA_OPTIONS", "-Dz=2"))
    assert jvm.options_from_env(env) == [("z", "1"), ("z", "2"), ("z", "3")]
    assert jvm.expand("$(A)/${B}/$C/$(D)", (("A", "1"), ("B", "2"), ("C", "3"))) == "1/2/3/$(D)"
    assert image_name("reg:5000/team/svc:1.2@sha256:ab") == "svc"


def test_environment_conventions_and_config() -> None:
    assert [canonical(n) for n in ("prod", "Production", "prod-eu", "preprod", "qa", "local", "pro", "profile")] == [
        "prod",
        "prod",
        "prod",
        "staging",
        "test",
        "dev",
        "prod",
        None,
    ]
    assert name_from_path("src/main/resources/application-prd.yml") == "prd"
    assert name_from_path("deploy/overlays/staging/deploy.yaml") == "staging"
    assert name_from_path("producer/app.py") is None
    assert name_from_path("svc/src/test/java/ConsumerIT.java") is None
    cfg = Config(
        environments={
            "live-eu": EnvironmentSpec(namespaces=("shop-eu",), production=True),
            "perf": EnvironmentSpec(paths=("perf/**",)),
        }
    )
    assert classify("shop-eu", cfg).production is True and classify("shop-eu", cfg).name == "live-eu"
    assert classify("test", cfg).production is False and classify("blue", cfg).production is None
    assert environment_of(consumer(path="perf/x.py"), cfg).name == "perf"


def test_clusters() -> None:
    a = cluster_of(Value.literal("ns1:9876;ns2:9876"))
    b = cluster_of(Value.literal("NS2"))
    c = cluster_of(Value.literal("other:9876"))
    assert a.overlaps(b) is True and a.overlaps(c) is False
    assert cluster_of(Value.literal("${rocketmq.name-server}")).known is False
    assert cluster_of(None).overlaps(a) is None


def test_offset_dir_cases() -> None:
    c = consumer()
    assert offset_dir(consumer(model="CLUSTERING"), deployment()) is None
    assert offset_dir(consumer(client=ClientFamily.PYTHON_GRPC_5X), deployment()) is None
    none = offset_dir(c, deployment())
    assert none is not None and (none.text, none.persistent) == ("/root/.rocketmq_offsets", False)
    assert offset_dir(c, deployment(options=DIR, mounts=(EMPTY,))).persistent is False  # type: ignore[union-attr]
    assert offset_dir(c, deployment(options=DIR, mounts=(PVC,))).persistent is True  # type: ignore[union-attr]
    nested = (PVC, Mount(path="/offsets/tmp", volume_kind="emptyDir", persistent=False))
    assert (
        offset_dir(
            c, deployment(options=(("rocketmq.client.localOffsetStoreDir", "/offsets/tmp/x"),), mounts=nested)
        ).persistent
        is False
    )  # type: ignore[union-attr]
    unknown = offset_dir(c, deployment(options=(("rocketmq.client.localOffsetStoreDir", "$(DIR)"),), mounts=(PVC,)))
    assert unknown is not None and unknown.persistent is None
    home = offset_dir(c, deployment(options=(("user.home", "/offsets"),), mounts=(PVC,)))
    assert home is not None and (home.text, home.persistent) == ("/offsets/.rocketmq_offsets", True)
    # the C++ client ignores -D options: only HOME counts
    cpp = consumer(client=ClientFamily.PYTHON_NATIVE_4X)
    assert offset_dir(cpp, deployment(options=DIR, mounts=(PVC,))).persistent is False  # type: ignore[union-attr]
    assert offset_dir(cpp, deployment(env=(("HOME", "/offsets"),), mounts=(PVC,))).persistent is True  # type: ignore[union-attr]


def test_client_id_stability() -> None:
    sts_env = (("POD_NAME", "<fieldRef:metadata.name>"),)
    from_env = Value.unknown('`System.getenv("POD_NAME")` is only known at run time')
    assert client_id(consumer(), deployment()).stable is False  # pod IP
    assert client_id(consumer(instance_name=Value.literal("fixed")), deployment()).stable is False
    assert client_id(consumer(client_ip=from_env), deployment("StatefulSet", env=sts_env)).stable is True
    assert client_id(consumer(client_ip=from_env), deployment("Deployment", env=sts_env)).stable is False
    assert client_id(consumer(client_ip=Value.literal("10.0.0.7")), deployment()).stable is True
    assert client_id(consumer(client_ip=Value.unknown("computed")), deployment()).stable is None
    assert client_id(consumer(), deployment("DaemonSet", ip="node-ip")).stable is True
    assert client_id(consumer(), deployment("Deployment", ip="node-ip")).stable is False
    scs = consumer(client=ClientFamily.SPRING_CLOUD_STREAM, client_ip=Value.literal("10.0.0.7"))
    assert client_id(scs, deployment()).stable is False  # pid + time in the instance name
    cpp = consumer(client=ClientFamily.PYTHON_NATIVE_4X, client_ip=Value.literal("10.0.0.7"))
    assert client_id(cpp, deployment()).stable is False  # no IP setter in the C++ client


def test_link_by_service_name_config_and_ambiguity() -> None:
    a = consumer("a", service="repo/services/billing", path="services/billing/x.py")
    b = consumer("b", service="repo/services/shipping", path="services/shipping/x.py")
    billing = deployment(deployment_id="d1#Deployment/billing/app", image="reg/billing:1")
    sidecar = deployment(deployment_id="d1#Deployment/billing/envoy", image="envoyproxy/envoy:1")
    both = deployment(deployment_id="d2#Deployment/x/app", labels=(("app", "billing"), ("component", "shipping")))
    broker = deployment(deployment_id="d3#compose/broker", kind="compose", image="apache/rocketmq:5")
    links = link([a, b], [billing, sidecar, both, broker], Config())
    assert [d.deployment_id for d in links.deployments_of(a)] == ["d1#Deployment/billing/app"]
    assert links.deployments_of(b) == ()
    assert links.ambiguous == {"d2#Deployment/x/app": ("repo/services/billing", "repo/services/shipping")}
    cfg = Config(services={"repo/services/shipping": ServiceSpec(labels=("component=shipping",))})
    assert [d.deployment_id for d in link([a, b], [both], cfg).deployments_of(b)] == ["d2#Deployment/x/app"]
    # one consumer service in the repo: an unnamed workload is linked to it, a broker image is not
    solo = link([a], [deployment(deployment_id="d4#Deployment/x/app", image="reg/whatever:1"), broker], Config())
    assert [d.deployment_id for d in solo.deployments_of(a)] == ["d4#Deployment/x/app"]


def test_group_split_by_cluster_unknown_joins_every_cluster() -> None:
    from subguard.rules.deploy_subjects import GROUP_CLUSTER, topic_environment
    from subguard.rules.subjects import Universe

    def member(cid: str, env: str, ns: str | None) -> Consumer:
        return consumer(
            cid, model="CLUSTERING", environment=env, name_server=Value.literal(ns) if ns else None, path=f"{cid}.java"
        )

    u = Universe.of(
        [member("a", "prod", "ns:9876"), member("b", "test", None), member("c", "dev", "other:9876")], [], Config()
    )
    subjects = {s.fields["cluster"]: s.fields for s in GROUP_CLUSTER.build(u)}
    assert subjects["ns:9876"]["has_production"] and subjects["ns:9876"]["has_nonproduction"]
    assert "b.java:3:1" in subjects["ns:9876"]["cluster_note"]
    assert not subjects["other:9876"]["has_production"]
    assert topic_environment("orders-prod", Config()) == "prod" and topic_environment("products", Config()) is None
    custom = Config(topic_environment_patterns={"blue": r"^blue\."})
    assert topic_environment("blue.orders", custom) == "blue" and topic_environment("orders-prod", custom) is None
