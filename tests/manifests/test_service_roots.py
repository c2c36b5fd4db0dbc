"""Service boundaries without build files (issue 18, item 3): module roots from the Maven/Gradle
layout, a Dockerfile or a deployment folder beside source, and deployment links by folder name."""

from __future__ import annotations

from subguard.core.config import Config
from subguard.core.model import ClientFamily, Consumer, Deployment, Location, Resolution, Value
from subguard.deploy.link import link
from subguard.deploy.service import dependents, find_roots, hosted, module_dir, service_for

MONOREPO = frozenset(
    {
        "README.md",
        "deploy/rate-service.yaml",  # a repo-level deployment folder: the root is never a module
        "price-service/src/main/java/com/acme/price/PriceCache.java",
        "price-service/src/main/java/com/acme/deploy/Rollout.java",  # a package named deploy
        "price-service/src/main/resources/deploy/notes.yaml",  # inside a source tree: no module
        "price-service/k8s/statefulset.yaml",
        "quote-service/src/test/java/com/acme/QuoteIT.java",  # only a test tree: still the layout
        "rate-service/consumer.py",
        "rate-service/Dockerfile",
        "stock-service/app/consumer.py",
        "stock-service/helm/stock/values.yaml",
        "stock-service/helm/stock/Chart.yaml",  # a chart is its own module, inside stock-service
        "docker/Dockerfile",  # a Dockerfile with no source beside it
        "ops/k8s/cron.yaml",  # a deployment folder with no source beside it
        "ops/k8s/tools/cleanup.py",  # source inside the deployment folder does not count
        "billing/pom.xml",
        "billing/web/src/main/java/Web.java",  # a Gradle/Maven submodule without its own build file
    }
)


def test_module_roots_and_why() -> None:
    assert find_roots(MONOREPO).roots == {
        "price-service": "src/main layout",
        "quote-service": "src/test layout",
        "rate-service": "Dockerfile beside source",
        "stock-service": "helm/ beside source",
        "stock-service/helm/stock": "Chart.yaml",
        "billing": "pom.xml",
        "billing/web": "src/main layout",
    }


def test_module_dir_of_each_file() -> None:
    expected = {
        "deploy/rate-service.yaml": "",
        "README.md": "",
        "price-service/src/main/java/com/acme/price/PriceCache.java": "price-service",
        "price-service/src/main/java/com/acme/deploy/Rollout.java": "price-service",
        "price-service/k8s/statefulset.yaml": "price-service",
        "quote-service/src/test/java/com/acme/QuoteIT.java": "quote-service",
        "rate-service/consumer.py": "rate-service",
        "rate-service/Dockerfile": "rate-service",
        "stock-service/app/consumer.py": "stock-service",
        "stock-service/helm/stock/values.yaml": "stock-service/helm/stock",
        "docker/Dockerfile": "",
        "ops/k8s/cron.yaml": "",
        "billing/web/src/main/java/Web.java": "billing/web",
    }
    assert {p: module_dir(p, MONOREPO) for p in expected} == expected
    assert service_for("price-service/k8s/statefulset.yaml", MONOREPO, "shop", Config()) == "shop/price-service"
    assert service_for("deploy/rate-service.yaml", MONOREPO, "shop", Config()) == "shop"
    # a plain set or list gives the same answer (the frozenset is only the cache key)
    assert module_dir("rate-service/consumer.py", list(MONOREPO)) == "rate-service"


def test_a_single_service_repo_keeps_its_root() -> None:
    """The layout at the repo root, a k8s/ folder at the root: one repo-level service, as before."""
    paths = frozenset({"src/main/java/A.java", "k8s/deployment.yaml", "Dockerfile", "pom.xml"})
    assert find_roots(paths).roots == {}
    assert module_dir("k8s/deployment.yaml", paths) == module_dir("src/main/java/A.java", paths) == ""


def consumer(cid: str, path: str, service: str, repo: str = "shop") -> Consumer:
    return Consumer(
        consumer_id=cid,
        group=Value.literal(cid),
        message_model=Value.literal("BROADCASTING"),
        client=ClientFamily.JAVA_PUSH_4X,
        service=service,
        repo=repo,
        location=Location(path=path, line=3),
    )


def workload(name: str, path: str, service: str, repo: str = "shop", **kw: object) -> Deployment:
    base: dict[str, object] = {
        "deployment_id": f"{path}#Deployment/{name}/{name}",
        "service": service,
        "kind": "Deployment",
        "name": name,
        "repo": repo,
        "client_ip": Value(value="pod-ip", resolution=Resolution.DEFAULT),
        "location": Location(path=path, line=9),
    }
    base.update(kw)
    return Deployment(**base)  # type: ignore[arg-type]


def linked(consumers: list[Consumer], deps: list[Deployment]) -> dict[str, list[str]]:
    links = link(consumers, deps, Config())
    return {c.consumer_id: [d.name for d in links.deployments_of(c)] for c in consumers}


PRICE = consumer("price", "price-service/src/main/java/com/acme/price/PriceCache.java", "shop/price-service")
QUOTE = consumer("quote", "quote-service/src/main/java/com/acme/quote/QuoteCache.java", "shop/quote-service")
TOOL = consumer("tool", "tools/replay/ReplayAll.java", "shop")  # the repo-level service


def test_each_workload_runs_its_own_folder_only() -> None:
    deps = [
        workload("price-service", "price-service/k8s/statefulset.yaml", "shop/price-service"),  # inside the module
        workload("quote", "deploy/quote.yaml", "shop", image="reg/quote-service:1"),  # by image name
        workload("replay", "deploy/replay.yaml", "shop"),  # no name matches: the repo-level service
    ]
    assert linked([PRICE, QUOTE, TOOL], deps) == {"price": ["price-service"], "quote": ["quote"], "tool": ["replay"]}


def test_a_name_beats_the_repo_level_fallback() -> None:
    """A repo-level manifest named after a folder runs that folder's consumers, not the repo-level ones."""
    dep = workload("price-service", "deploy/price.yaml", "shop")
    assert linked([PRICE, TOOL], [dep]) == {"price": ["price-service"], "tool": []}


def test_a_folder_inside_a_service_links_only_its_consumers() -> None:
    """One repo-level service (one pyproject.toml at the root), consumers in two folders: a workload
    named after one folder runs only the consumers under it."""
    a = consumer("a", "workers/prices/consumer.py", "shop")
    b = consumer("b", "workers/quotes/consumer.py", "shop")
    deps = [
        workload("prices", "k8s/prices.yaml", "shop"),
        workload("quotes", "k8s/quotes.yaml", "shop", labels=(("app", "quotes"),)),
    ]
    assert linked([a, b], deps) == {"a": ["prices"], "b": ["quotes"]}


def test_nested_folders_of_one_service_are_one_choice_and_disjoint_ones_are_ambiguous() -> None:
    nested = consumer("n", "billing/src/main/java/com/acme/billing/Bills.java", "shop/billing")
    dep = workload("billing", "deploy/billing.yaml", "shop")
    assert linked([nested], [dep]) == {"n": ["billing"]}
    x = consumer("x", "a/api/consumer.py", "shop")
    y = consumer("y", "b/api/consumer.py", "shop")
    links = link([x, y], [workload("api", "k8s/api.yaml", "shop")], Config())
    assert links.ambiguous == {"k8s/api.yaml#Deployment/api/api": ("shop (a/api/)", "shop (b/api/)")}
    assert links.deployments_of(x) == links.deployments_of(y) == ()


def test_a_chart_inside_a_service_runs_that_service() -> None:
    dep = workload("chart", "price-service/helm/chart/values.yaml", "shop/price-service/helm/chart", kind="helm-values")
    assert linked([PRICE, QUOTE], [dep]) == {"price": ["chart"], "quote": []}


def test_other_repos_match_by_service_name_only() -> None:
    """A deployment repo names services of other repos by module or repo name, not by any folder."""
    infra = [
        workload("price-service", "apps/price.yaml", "infra", repo="infra"),
        workload("acme", "apps/acme.yaml", "infra", repo="infra"),
    ]
    inner = consumer("inner", "shop/acme/consumer.py", "shop")  # a folder named acme is no service name
    assert linked([PRICE, inner], infra) == {"price": ["price-service"], "inner": []}


def test_repo_name_is_the_repo_level_service_only() -> None:
    dep = workload(
        "shop", "ops/k8s/shop.yaml", "shop/ops"
    )  # ops/ is a module (scripts and a Dockerfile) with no consumers
    assert linked([PRICE, TOOL], [dep]) == {"price": [], "tool": ["shop"]}


# A shared module (`mq/`) that two application modules depend on, as multi-module Spring projects
# keep their listeners: the consumers run in `payment/` and `manager/`, never in `mq/` on its own.
SHARED_PATHS = frozenset(
    {
        "pom.xml",
        "mq/pom.xml",
        "mq/src/main/java/com/acme/mq/ResetListener.java",
        "payment/pom.xml",
        "payment/src/main/java/com/acme/pay/App.java",
        "manager/pom.xml",
        "manager/src/main/java/com/acme/manage/App.java",
        "common/pom.xml",
        "common/src/main/java/com/acme/common/Util.java",
    }
)
SHARED_DEPENDS = {"payment": ("common", "mq"), "manager": ("mq",), "mq": ("common",)}


def shared_listener() -> Consumer:
    (c,) = hosted(
        [consumer("reset", "mq/src/main/java/com/acme/mq/ResetListener.java", "shop/mq")],
        SHARED_DEPENDS,
        SHARED_PATHS,
        "shop",
        Config(),
    )
    return c


def test_a_shared_module_is_hosted_by_the_modules_that_depend_on_it() -> None:
    assert dependents(SHARED_DEPENDS) == {
        "common": frozenset({"payment", "mq", "manager"}),  # manager through mq
        "mq": frozenset({"payment", "manager"}),
    }
    assert shared_listener().hosted_by == ("shop/manager", "shop/payment")
    app = consumer("app", "payment/src/main/java/com/acme/pay/App.java", "shop/payment")
    assert hosted([app], SHARED_DEPENDS, SHARED_PATHS, "shop", Config()) == [app]  # nothing depends on payment


def test_a_deployment_of_a_module_runs_the_listeners_of_the_modules_it_depends_on() -> None:
    c = shared_listener()
    deps = [
        workload("payment", "docker-compose.yml", "shop/payment", kind="compose"),  # `build: ./payment`
        workload("jeepay-manager", "ops/manager.yaml", "shop", image="reg/manager:1"),  # named after the module
        workload("ui", "ops/ui.yaml", "shop"),  # neither: not the shared module's by elimination
        workload("mysql", "docker-compose.yml", "shop", kind="compose"),  # an overlay service without image
    ]
    assert linked([c], deps) == {"reset": ["payment", "jeepay-manager"]}
    assert link([c], deps[2:], Config()).linked == {}


def test_a_shared_module_with_one_user_links_by_elimination_to_that_user() -> None:
    (c,) = hosted(
        [consumer("reset", "mq/src/main/java/com/acme/mq/ResetListener.java", "shop/mq")],
        {"payment": ("mq",)},
        SHARED_PATHS,
        "shop",
        Config(),
    )
    links = link([c], [workload("api", "ops/api.yaml", "shop")], Config())
    assert links.deployments_of(c)[0].name == "api"
    assert links.linked == {"ops/api.yaml#Deployment/api/api": "shop/payment"}


def test_elimination_never_links_a_module_of_its_own_nor_one_of_several_unnamed_workloads() -> None:
    """Level 0 links one unnamed workload to the repo's one consumer service; a compose file with
    several such services (which one runs the consumers?) or a service built from a module of its
    own (it runs that module) is left unlinked."""
    c = consumer("price", "price-service/src/main/java/com/acme/price/PriceCache.java", "shop/price-service")
    assert linked([c], [workload("api", "ops/api.yaml", "shop")]) == {"price": ["api"]}
    several = [
        workload("configs", "docker-compose.yml", "shop", kind="compose", image="alpine/git:2"),
        workload("gateway", "docker-compose.yml", "shop", kind="compose", image="acme/gateway:1"),
        workload("mysql", "docker-compose.yml", "shop", kind="compose", image="mysql:8"),  # infra: not counted
        workload("api", "ops/api.yaml", "shop"),  # alone in its file
    ]
    assert linked([c], several) == {"price": ["api"]}
    own = workload("ui", "docker-compose.yml", "shop/ui", kind="compose")  # `build: ./ui`, a module
    assert linked([c], [own]) == {"price": []}
