"""Templates for the generated part of the recall truth set: components of the tidewater code base
crossed with the kinds of trouble real code has.

A note is worded the way the engineer who hit the problem wrote it (symbol names, file, cause,
fix); its query is worded the way the next person meets the symptom (the component's everyday
name, what they see). The same problem recurs across components, so a query must find *this*
component's note among look-alikes.
"""

# key, path, symbols, everyday names (used by queries), tag, a resource, a library, an env var
COMPONENTS = [
    ("invoice", "src/tidewater/billing/invoice.py", ("InvoiceBuilder", "apply_tax_lines"),
     ("invoice generation", "monthly billing statements"), "billing", "invoice row", "weasyprint", "INVOICE_BUCKET"),
    ("stripe", "src/tidewater/billing/stripe_gateway.py", ("StripeGateway", "capture_intent"),
     ("card payments", "charging customers"), "payments", "payment intent", "stripe", "STRIPE_API_KEY"),
    ("sessions", "src/tidewater/auth/session_store.py", ("SessionStore", "rotate_token"),
     ("login sessions", "staying signed in"), "auth", "session key", "redis-py", "SESSION_TTL"),
    ("oauth", "src/tidewater/auth/oauth_callback.py", ("handle_oauth_callback", "PKCEVerifier"),
     ("single sign-on", "Google login"), "auth", "state cookie", "authlib", "OAUTH_CLIENT_ID"),
    ("scheduler", "src/tidewater/dispatch/scheduler.py", ("RouteScheduler", "assign_driver"),
     ("driver assignment", "route planning"), "dispatch", "route plan", "ortools", "DISPATCH_HORIZON"),
    ("geocode", "src/tidewater/geo/geocode.py", ("GeocodeClient", "normalize_address"),
     ("address lookup", "turning addresses into coordinates"), "geo", "address", "httpx", "MAPBOX_TOKEN"),
    ("eta", "src/tidewater/geo/eta_model.py", ("EtaPredictor", "haversine_km"),
     ("arrival time estimates", "delivery ETA"), "geo", "stop", "numpy", "ETA_SPEED_KMH"),
    ("queue", "src/tidewater/worker/queue.py", ("JobQueue", "enqueue_with_retry"),
     ("background jobs", "async work"), "worker", "job", "redis-py", "WORKER_CONCURRENCY"),
    ("mailer", "src/tidewater/notify/mailer.py", ("Mailer", "render_template"),
     ("outgoing email", "customer notifications"), "notify", "message", "jinja2", "MAIL_FROM"),
    ("sms", "src/tidewater/notify/sms.py", ("TwilioSender", "send_sms"),
     ("text messages to drivers", "SMS alerts"), "notify", "SMS segment", "twilio", "TWILIO_FROM"),
    ("migrations", "migrations/env.py", ("run_migrations_online", "include_object"),
     ("schema changes", "database migrations"), "migrations", "revision", "alembic", "ALEMBIC_CONFIG"),
    ("models", "src/tidewater/db/models.py", ("Shipment", "Consignee"),
     ("the shipment table", "data model"), "db", "shipment row", "sqlalchemy", "DB_SCHEMA"),
    ("engine", "src/tidewater/db/engine.py", ("get_engine", "session_scope"),
     ("database connections", "connection pool"), "db", "connection", "psycopg", "DATABASE_URL"),
    ("routes", "src/tidewater/api/routes/shipments.py", ("list_shipments", "ShipmentOut"),
     ("shipments endpoint", "REST API for shipments"), "api", "response", "fastapi", "API_PAGE_SIZE"),
    ("ratelimit", "src/tidewater/api/ratelimit.py", ("TokenBucket", "limit_by_tenant"),
     ("request throttling", "API quotas"), "api", "bucket", "redis-py", "RATE_LIMIT_RPS"),
    ("webhooks", "src/tidewater/api/webhooks.py", ("verify_signature", "WebhookReplayGuard"),
     ("incoming partner callbacks", "carrier status pushes"), "api", "callback", "hmac", "WEBHOOK_SECRET"),
    ("indexer", "src/tidewater/search/indexer.py", ("ShipmentIndexer", "reindex_tenant"),
     ("shipment search", "finding shipments by text"), "search", "search document", "sqlalchemy", "SEARCH_BATCH"),
    ("cache", "src/tidewater/cache/redis_cache.py", ("cached", "invalidate_prefix"),
     ("the caching layer", "memoised lookups"), "cache", "cache entry", "redis-py", "CACHE_TTL"),
    ("config", "src/tidewater/config.py", ("Settings", "load_settings"),
     ("app configuration", "environment settings"), "config", "setting", "pydantic", "TIDEWATER_ENV"),
    ("logging", "src/tidewater/obs/logging.py", ("configure_logging", "JsonFormatter"),
     ("structured logs", "log output"), "observability", "log record", "structlog", "LOG_LEVEL"),
    ("metrics", "src/tidewater/obs/metrics.py", ("record_latency", "PrometheusExporter"),
     ("monitoring dashboards", "latency metrics"), "observability", "histogram", "prometheus-client", "METRICS_PORT"),
    ("flags", "src/tidewater/flags.py", ("FlagClient", "is_enabled"),
     ("feature toggles", "gradual rollouts"), "flags", "flag", "cachetools", "FLAGS_REFRESH"),
    ("labels", "src/tidewater/labels/render.py", ("LabelRenderer", "zpl_encode"),
     ("shipping labels", "printer output"), "labels", "label", "pillow", "LABEL_DPI"),
    ("csvimport", "src/tidewater/imports/csv_loader.py", ("CsvShipmentLoader", "sniff_dialect"),
     ("bulk upload", "spreadsheet import"), "imports", "CSV row", "pandas", "IMPORT_MAX_ROWS"),
    ("i18n", "web/src/i18n/index.ts", ("useTranslation", "loadLocale"),
     ("translations", "localisation of the UI"), "frontend", "locale bundle", "i18next", "VITE_DEFAULT_LOCALE"),
    ("checkout", "web/src/components/CheckoutForm.tsx", ("CheckoutForm", "usePaymentIntent"),
     ("the payment page", "checkout screen"), "frontend", "form state", "react-hook-form", "VITE_STRIPE_PK"),
    ("mapview", "web/src/components/MapView.tsx", ("MapView", "useLiveDrivers"),
     ("the live map", "driver tracking screen"), "frontend", "marker", "mapbox-gl", "VITE_MAPBOX_TOKEN"),
    ("apiclient", "web/src/api/client.ts", ("apiFetch", "refreshAccessToken"),
     ("frontend HTTP calls", "the browser API wrapper"), "frontend", "request", "ky", "VITE_API_BASE"),
    ("vite", "web/vite.config.ts", ("manualChunks", "defineConfig"),
     ("the frontend bundle", "web build"), "build", "chunk", "vite", "VITE_SOURCEMAP"),
    ("ci", ".github/workflows/ci.yml", ("test-matrix", "cache-deps"),
     ("the pipeline", "continuous integration"), "ci", "job step", "actions/cache", "CI_PYTHON"),
    ("docker", "deploy/Dockerfile", ("builder-stage", "gunicorn-entrypoint"),
     ("the container image", "docker build"), "deploy", "layer", "gunicorn", "GUNICORN_WORKERS"),
    ("k8s", "deploy/k8s/api-deployment.yaml", ("readinessProbe", "HorizontalPodAutoscaler"),
     ("kubernetes rollout", "the api pods"), "deploy", "pod", "kubectl", "POD_MEMORY_LIMIT"),
    ("terraform", "deploy/terraform/rds.tf", ("aws_db_instance", "aws_db_parameter_group"),
     ("infrastructure code", "the postgres instance"), "infra", "resource", "terraform-aws", "TF_WORKSPACE"),
    ("conftest", "tests/conftest.py", ("shipment_factory", "pg_session"),
     ("test setup", "shared fixtures"), "tests", "fixture", "pytest", "TEST_DATABASE_URL"),
    ("e2e", "web/e2e/checkout.spec.ts", ("checkoutPage", "loginAs"),
     ("browser tests", "end-to-end suite"), "tests", "page object", "playwright", "E2E_BASE_URL"),
    ("tenancy", "src/tidewater/tenancy/context.py", ("current_tenant", "TenantMiddleware"),
     ("multi-tenant separation", "customer data isolation"), "tenancy", "tenant context", "contextvars", "DEFAULT_TENANT"),
]

# Each problem: key, kind, priority, title, bodies, queries (symptom-first), symbol keyword,
# file-query words. Placeholders: {sym} {sym2} {file} {base} {alias} {res} {lib} {env}.
PROBLEMS = [
    ("deadlock", "gotcha", "high",
     "{sym} deadlocks inside an open transaction",
     ["Calling {sym} while a DB transaction is open deadlocks: it takes the {res} lock again on a second "
      "connection. Call it after commit, or pass the current session in.",
      "{sym} in {file} grabs a row lock on its own connection; from inside session_scope() that waits "
      "on itself forever. Move the call after the commit."],
     ["{alias} hangs forever and never returns", "why does {alias} freeze under load"],
     "lock", "hang"),
    ("naive-dt", "gotcha", "medium",
     "{sym} returns naive datetimes",
     ["{sym} builds datetimes without tzinfo; comparing them with timestamptz values raises "
      "TypeError: can't compare offset-naive and offset-aware. Use utcnow_aware().",
      "The timestamps coming out of {sym} ({file}) are naive. Anything that mixes them with aware "
      "ones blows up or is silently an hour off in summer."],
     ["time zone comparison crash in {alias}", "{alias} is one hour off after the clock change"],
     "naive datetime", "timezone"),
    ("not-idempotent", "gotcha", "high",
     "{sym} is not idempotent",
     ["Retrying {sym} applies it twice: there is no dedupe key on the {res}. Either pass an "
      "idempotency key or check for the existing record first.",
      "{sym} ({file}) creates a new {res} on every call, so a redelivered job duplicates it."],
     ["duplicates appear after a retry in {alias}", "{alias} ran twice and created double records"],
     "idempotency", "duplicate"),
    ("unbounded-cache", "gotcha", "medium",
     "{sym} keeps an unbounded module-level dict",
     ["{sym} memoises every {res} in a module global that is never evicted; long-running workers grow "
      "by ~300 MB a day. Use an LRU with a max size.",
      "Memory leak: {file} stores results of {sym} in a plain dict keyed by {res}. Restarting the pod "
      "is the only thing that frees it."],
     ["{alias} RAM usage keeps climbing until the pod restarts", "out of memory kills related to {alias}"],
     "memory leak", "memory"),
    ("n-plus-one", "finding", "medium",
     "{sym} issues one query per {res}",
     ["Profiling: {sym} runs a SELECT per {res} (N+1). With 2,000 rows that is 2,000 round trips; "
      "selectinload or one IN query fixes it.",
      "{sym} in {file} lazy-loads relationships inside the loop. A joinedload drops the query count "
      "from hundreds to one."],
     ["{alias} is slow for big customers", "too many database round trips in {alias}"],
     "N+1 queries", "slow"),
    ("encoding", "gotcha", "medium",
     "{sym} assumes UTF-8 input",
     ["Files from some depots arrive as Windows-1252; {sym} decodes as UTF-8 and replaces umlauts "
      "and accents with U+FFFD. Detect the charset first.",
      "{sym} ({file}) mangles non-ASCII characters when the source is Latin-1."],
     ["accented customer names come out garbled in {alias}", "weird question mark characters in {alias}"],
     "unicode decode", "encoding"),
    ("flaky", "finding", "low",
     "Tests around {sym} fail intermittently on CI",
     ["The {sym} tests depend on dict/set ordering and on wall-clock time; they fail about 1 run in 30 "
      "on CI. Sort the output and freeze the clock.",
      "Intermittent CI failures in tests for {file}: {sym} is called before the fixture's background "
      "thread finished. Join it first."],
     ["flaky test around {alias}", "{alias} tests pass locally but sometimes fail in the pipeline"],
     "intermittent test", "flaky"),
    ("env-default", "gotcha", "medium",
     "{sym} silently falls back when {env} is unset",
     ["If {env} is missing, {sym} uses a hard-coded default instead of failing; staging ran with the "
      "dev value for a week. Make the variable required.",
      "{sym} in {file} reads {env} with a default, so a typo in the deployment manifest goes unnoticed."],
     ["{alias} ignores my environment setting", "changed the config variable but {alias} behaves the same"],
     "default value", "config"),
    ("float-rounding", "gotcha", "high",
     "{sym} rounds with float arithmetic",
     ["{sym} sums amounts as floats; totals drift by a cent on long lists. Use integer minor units "
      "or Decimal with ROUND_HALF_EVEN.",
      "Rounding bug: {file} computes {res} values with float and round(), which is banker's rounding "
      "on binary fractions."],
     ["numbers off by one cent in {alias}", "{alias} totals don't add up"],
     "float rounding", "rounding"),
    ("thread-safety", "gotcha", "high",
     "{sym} is not thread-safe",
     ["A single {sym} instance is shared across gunicorn threads and mutates its {res} state; "
      "concurrent requests corrupt each other. Create one per request or guard with a lock.",
      "{sym} ({file}) keeps per-call state on self; two threads interleave and mix up results."],
     ["race condition in {alias} under concurrency", "{alias} randomly returns another request's data"],
     "race condition", "concurrency"),
    ("no-timeout", "gotcha", "high",
     "{sym} calls upstream without a timeout",
     ["The outbound HTTP call in {sym} has no timeout; a stuck upstream pins a worker thread until "
      "the pod is killed. Use tidewater.http.client().",
      "{sym} in {file} uses {lib} with default settings: no connect or read timeout."],
     ["{alias} requests never come back when the provider is down", "{alias} stuck waiting on an external service"],
     "timeout", "stuck"),
    ("call-order", "gotcha", "medium",
     "{sym2} must run before {sym}",
     ["{sym} reads state that {sym2} sets up; calling it first returns empty results without an "
      "error. Keep the order in {file}.",
      "Order matters in {file}: {sym2} first, then {sym}, or the {res} is half-initialised."],
     ["{alias} returns nothing and no error", "right sequence of calls for {alias}"],
     "initialisation order", "order"),
    ("tenant-cache", "gotcha", "high",
     "{sym} cache key misses the tenant id",
     ["{sym} caches by {res} only; two tenants with the same reference see each other's data. The "
      "key must include current_tenant().",
      "Cross-tenant leak risk: {file} memoises {sym} results globally."],
     ["{alias} shows another customer's data", "one account sees records belonging to a different company in {alias}"],
     "tenant cache key", "leak"),
    ("big-file", "gotcha", "medium",
     "{sym} reads the whole payload into memory",
     ["{sym} loads the entire {res} payload at once; inputs over 200 MB OOM-kill the pod. Stream it.",
      "{file}: {sym} calls .read() on the upload, so big inputs exhaust the 512 MB limit."],
     ["{alias} crashes on large inputs", "pod killed when handling a huge upload in {alias}"],
     "streaming", "large"),
    ("pagination", "gotcha", "medium",
     "{sym} pagination skips rows",
     ["{sym} pages by a sort key that is not unique; rows with equal keys fall between pages. Add "
      "the id as a tie-breaker.",
      "Cursor pagination in {file} ({sym}) loses items when timestamps collide."],
     ["items missing between pages in {alias}", "{alias} list shows some records twice and others never"],
     "pagination cursor", "pages"),
    ("logs-secrets", "gotcha", "high",
     "{sym} logs the Authorization header",
     ["At DEBUG, {sym} logs the full outbound request, bearer token included. Logs ship to Loki and "
      "are readable by support. Redact headers.",
      "{file} dumps request headers in the error path of {sym}; that leaked a live API key once."],
     ["credentials leaking into log output from {alias}", "api keys visible in logs from {alias}"],
     "secret in logs", "logging"),
    ("version-pin", "gotcha", "medium",
     "{lib} newer than the pinned version breaks {sym}",
     ["{sym} relies on behaviour {lib} changed in its last major release; tests pass but production "
      "breaks. Keep the pin until {sym} is ported.",
      "Don't bump {lib}: the new release changed an API {file} uses in {sym}."],
     ["can I upgrade {lib}", "dependency update broke {alias}"],
     "version pin", "upgrade"),
    ("cpu-profile", "finding", "low",
     "{sym} spends most of its time serialising",
     ["py-spy: 70% of {sym} is JSON encoding of {res} objects; orjson cut it by 4x in a spike.",
      "Profiled {file}: {sym} is CPU-bound on serialisation, not on IO."],
     ["where does {alias} spend its CPU", "make {alias} faster"],
     "profiling", "performance"),
    ("swallowed", "gotcha", "medium",
     "{sym} swallows exceptions",
     ["{sym} wraps its body in except Exception and returns None, so failures surface later as "
      "AttributeError far away. Let it raise.",
      "{file}: errors inside {sym} are caught and logged at DEBUG, which production never shows."],
     ["{alias} fails silently", "no error message when {alias} breaks"],
     "exception handling", "silent"),
    ("collation", "gotcha", "low",
     "{sym} sort order differs between Python and Postgres",
     ["{sym} sorts in Python with the default codepoint order while the SQL uses the en_US collation; "
      "lists jump around between pages. Sort in one place.",
      "{file} re-sorts {res} values in Python after the query; with accents the order disagrees."],
     ["inconsistent ordering in {alias}", "sorting is different after refresh in {alias}"],
     "collation", "sorting"),
]

# Tasks that happen every week; filler checkpoints use these.
TASK_VERBS = [
    ("Refactor", "refactoring"), ("Add tests for", "testing"), ("Migrate", "migrating"),
    ("Document", "documenting"), ("Speed up", "optimising"), ("Fix the regression in", "fixing"),
    ("Instrument", "instrumenting"), ("Remove the legacy path from", "cleaning up"),
]
TASK_STATES = [
    "Done: extracted the helpers and added type hints. Next: split the module. Blocked on nothing.",
    "Half way: the happy path works, error handling still missing. Next: retries and a metric.",
    "Spike only, nothing merged. Findings are in the PR description; decide with the team first.",
    "Waiting on review of the first PR; the second one depends on it.",
    "Paused: priorities changed; branch kept, rebase before continuing.",
    "Tests written, implementation in progress; two edge cases around empty input remain.",
]

OPS_TEMPLATES = [
    ("Restarting {alias}", "To restart {alias} in production, roll the deployment: "
     "`kubectl rollout restart` on the owning deployment; it takes about two minutes.", "runbook"),
    ("Where {alias} logs go", "{alias} logs under the logger tidewater.{key}; in Grafana filter by "
     "logger name. DEBUG is off in production.", "observability"),
    ("Owner of {alias}", "Questions about {alias} go to the team channel listed in CODEOWNERS for {file}.",
     "ownership"),
    ("Local setup for {alias}", "Run `make dev` then `make seed`; {alias} needs {env} in .env.local "
     "(see .env.example).", "setup"),
]
