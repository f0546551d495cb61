"""The secret formats masking knows, as data: one row per format, each citing its source.

Two kinds of rows:

* ``TokenFormat``: a self-identifying token (a literal prefix, then a body of known shape).
  Its regex has a ``keep`` group, the public prefix that stays visible; the rest becomes
  ``***``. ``needles`` are lower-case literals every match contains (the cheap pre-scan).
* ``KeyedFormat``: a value that only identifies itself next to its provider's name, as in
  ``ADAFRUIT_IO_KEY = "…"``. The engine (``masking.py``) finds ``<name containing a keyword>``
  ``<assignment operator>`` ``<value>`` once for all rows and masks the value when it matches
  the row's ``value`` shape.

Sources. ``GITLEAKS`` rows restate, as Python ``re`` written for this table, the formats of
gitleaks' published rule list (config/gitleaks.toml, MIT licence, Copyright (c) 2019 Zachary
Rice; read at commit b58d3f102cf3a2c84cb7f923d05c25c9b1aed84b). ``VENDOR`` rows follow the
provider's own documentation of its token format; ``DETECT_SECRETS`` rows the formats of
Yelp's detect-secrets plugins (Apache-2.0); ``RAGIT`` rows are ours. Structural rules (PEM
blocks, URLs with credentials, key/value assignments, headers) live in ``masking.py``; their
format ids are listed in ``STRUCTURAL_FORMATS`` so that the table can be counted as a whole.

Changing any row changes what the store holds: bump ``masking.MASKING_VERSION``.
"""

from __future__ import annotations

from dataclasses import dataclass

GITLEAKS = "gitleaks config/gitleaks.toml @b58d3f1 (MIT)"
VENDOR = "provider documentation"
DETECT_SECRETS = "detect-secrets plugins (Apache-2.0)"
RAGIT = "ragit"

# Boundaries: a token does not start inside a longer alphanumeric run (an escaped line break
# such as the "\n" of a JSON transcript ends a run), and a fixed-length body does not end
# inside one.
_B = r"(?:(?<=\\[nrt])|(?<![A-Za-z0-9]))"  # a JSON-escaped "\n" before a token counts as a break
_E = r"(?![A-Za-z0-9])"
_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
_UUID_UPPER = r"[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}"


@dataclass(frozen=True)
class TokenFormat:
    """A self-identifying token format; ``formats`` lists the format ids the regex covers."""

    label: str
    family: str
    regex: str
    needles: tuple[str, ...]
    source: str
    formats: tuple[str, ...] = ()
    check: str = ""  # "random": the masked part must look random (see masking._random_enough)
    anchored: bool = True  # every match starts with a needle; else the needle is inside it

    def format_ids(self) -> tuple[str, ...]:
        return self.formats or (self.label.replace("_", "-"),)


@dataclass(frozen=True)
class KeyedFormat:
    """A provider value recognised by the provider's name in the key and the value's shape."""

    label: str
    family: str
    keywords: tuple[str, ...]
    value: str
    source: str


def _t(label: str, family: str, regex: str, needles: tuple[str, ...] | str, source: str,
       formats: tuple[str, ...] = (), check: str = "", anchored: bool = True) -> TokenFormat:
    return TokenFormat(label, family, regex, (needles,) if isinstance(needles, str) else needles,
                       source, formats, check, anchored)


# fmt: off
TOKEN_FORMATS: tuple[TokenFormat, ...] = (
    # --- AI providers ------------------------------------------------------------------------
    _t("anthropic_api_key", "anthropic", _B + r"(?P<keep>sk-ant-api\d\d-)[\w-]{32,}", "sk-ant-", GITLEAKS),
    _t("anthropic_admin_key", "anthropic", _B + r"(?P<keep>sk-ant-admin\d\d-)[\w-]{32,}", "sk-ant-", GITLEAKS),
    _t("anthropic_oauth_token", "anthropic", _B + r"(?P<keep>sk-ant-o(?:at|rt)\d\d-)[\w-]{32,}", "sk-ant-", VENDOR),
    _t("groq_api_key", "groq", _B + r"(?P<keep>gsk_)[A-Za-z0-9]{48,56}" + _E, "gsk_", VENDOR),
    _t("xai_api_key", "xai", _B + r"(?P<keep>xai-)[A-Za-z0-9]{70,90}" + _E, "xai-", VENDOR),
    _t("perplexity_api_key", "perplexity", _B + r"(?P<keep>pplx-)[A-Za-z0-9]{48}" + _E, "pplx-", GITLEAKS),
    _t("replicate_api_token", "replicate", _B + r"(?P<keep>r8_)[A-Za-z0-9]{37}" + _E, "r8_", VENDOR),
    _t("huggingface_token", "huggingface", _B + r"(?P<keep>hf_)[A-Za-z0-9]{34,40}" + _E, "hf_", GITLEAKS),
    _t("huggingface_org_token", "huggingface", _B + r"(?P<keep>api_org_)[A-Za-z0-9]{34}" + _E, "api_org_", GITLEAKS),
    _t("langsmith_api_key", "langchain", _B + r"(?P<keep>lsv2_(?:pt|sk)_)[a-f0-9]{32}_[a-f0-9]{10}" + _E, "lsv2_", VENDOR),
    _t("pinecone_api_key", "pinecone", _B + r"(?P<keep>pcsk_)[\w-]{40,120}", "pcsk_", VENDOR),
    # --- code hosting ------------------------------------------------------------------------
    _t("gitlab_token", "gitlab",
       _B + r"(?P<keep>gl(?:pat|rt|dt|ft|ffct|imt|agent|oas|ptt|soat)-)[\w.-]{20,}", "gl",
       GITLEAKS, ("gitlab-pat", "gitlab-runner-token", "gitlab-deploy-token", "gitlab-feed-token",
                  "gitlab-feature-flag-token", "gitlab-incoming-mail-token", "gitlab-agent-token",
                  "gitlab-oauth-secret", "gitlab-trigger-token", "gitlab-scim-token")),
    _t("gitlab_cicd_job_token", "gitlab", _B + r"(?P<keep>glcbt-)[0-9a-zA-Z]{1,5}_[\w-]{20,}", "glcbt-", GITLEAKS),
    _t("gitlab_runner_registration", "gitlab", _B + r"(?P<keep>GR1348941)[\w-]{20,}", "gr1348941", GITLEAKS),
    _t("gitlab_session_cookie", "gitlab", r"(?P<keep>_gitlab_session=)[0-9a-z]{32}" + _E, "_gitlab_session=", GITLEAKS),
    _t("github_refresh_token", "github", _B + r"(?P<keep>ghr_)[A-Za-z0-9]{36,}", "ghr_", GITLEAKS),
    _t("bitbucket_app_password", "bitbucket", _B + r"(?P<keep>ATBB)[A-Za-z0-9_=.-]{28,}", "atbb", VENDOR),
    _t("atlassian_api_token", "atlassian", _B + r"(?P<keep>ATATT3)[A-Za-z0-9_\-=]{60,}", "atatt3", GITLEAKS),
    _t("sourcegraph_token", "sourcegraph",
       _B + r"(?P<keep>sgp_)(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}" + _E, "sgp_", GITLEAKS),
    # --- package registries ------------------------------------------------------------------
    _t("npm_token", "npm", _B + r"(?P<keep>npm_)[A-Za-z0-9]{36}" + _E, "npm_", GITLEAKS),
    _t("pypi_token", "pypi", _B + r"(?P<keep>pypi-)AgE[\w-]{50,}", "pypi-", GITLEAKS,
       ("pypi-upload-token", "testpypi-upload-token")),
    _t("rubygems_token", "rubygems", _B + r"(?P<keep>rubygems_)[a-f0-9]{48}" + _E, "rubygems_", GITLEAKS),
    _t("clojars_token", "clojars", _B + r"(?P<keep>CLOJARS_)[a-z0-9]{60}" + _E, "clojars_", GITLEAKS),
    _t("nuget_api_key", "nuget", _B + r"(?P<keep>oy2)[a-z0-9]{43}" + _E, "oy2", VENDOR),
    _t("crates_io_token", "crates", _B + r"(?P<keep>cio)[A-Za-z0-9]{32}" + _E, "cio", VENDOR, check="random"),
    _t("dockerhub_pat", "docker", _B + r"(?P<keep>dckr_(?:pat|oat)_)[\w-]{27,}", "dckr_", VENDOR,
       ("dockerhub-pat", "dockerhub-org-token")),
    _t("artifactory_api_key", "jfrog", _B + r"(?P<keep>AKCp)[A-Za-z0-9]{69}" + _E, "akcp", GITLEAKS),
    _t("artifactory_reference_token", "jfrog", _B + r"(?P<keep>cmVmd)[A-Za-z0-9]{59}" + _E, "cmvmd", GITLEAKS),
    # --- cloud -------------------------------------------------------------------------------
    _t("aws_temporary_key", "aws", _B + r"(?P<keep>(?:ASIA|ABIA|ACCA|A3T[A-Z0-9]))[A-Z2-7]{16}" + _E,
       ("asia", "abia", "acca", "a3t"), GITLEAKS, ("aws-temporary-access-key", "aws-other-access-key")),
    _t("aws_bedrock_key", "aws", _B + r"(?P<keep>ABSK)[A-Za-z0-9+/]{109,269}={0,2}", "absk", GITLEAKS),
    _t("aws_bedrock_short_key", "aws", r"(?P<keep>bedrock-api-key-)YmVkcm9jay5hbWF6b25hd3MuY29t[\w%+/=&?.-]{20,}",
       "bedrock-api-key-", GITLEAKS),
    _t("azure_ad_client_secret", "azure",
       r"(?<![\w~.-])(?P<keep>)[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![\w~.-])", "q~", GITLEAKS, anchored=False),
    _t("azure_storage_key", "azure",
       r"(?i)(?<![A-Za-z])(?P<keep>(?:AccountKey|SharedAccessKey|PrimaryKey|SecondaryKey)=)[A-Za-z0-9+/]{20,}={0,2}",
       ("accountkey", "sharedaccesskey", "primarykey", "secondarykey"), VENDOR,
       ("azure-storage-connection-string", "azure-service-bus-key")),
    _t("azure_sas_signature", "azure", r"(?<![A-Za-z0-9_])(?P<keep>sig=)[A-Za-z0-9%+/]{20,}={0,2}", "sig=", VENDOR),
    _t("gcp_oauth_client_secret", "google", _B + r"(?P<keep>GOCSPX-)[\w-]{28}" + _E, "gocspx-", VENDOR),
    _t("gcp_oauth_access_token", "google", _B + r"(?P<keep>ya29\.)[\w-]{30,}", "ya29.", VENDOR),
    _t("firebase_fcm_server_key", "google", _B + r"(?P<keep>AAAA)[\w-]{7}:APA91b[\w-]{120,}", ":apa91b", RAGIT, anchored=False),
    _t("alibaba_access_key", "alibaba", _B + r"(?P<keep>LTAI)[A-Za-z0-9]{20}" + _E, "ltai", GITLEAKS),
    _t("tencent_secret_id", "tencent", _B + r"(?P<keep>AKID)[A-Za-z0-9]{32}" + _E, "akid", VENDOR),
    _t("yandex_iam_token", "yandex", _B + r"(?P<keep>t1\.)[A-Za-z0-9_-]+={0,2}\.[A-Za-z0-9_-]{86}={0,2}", "t1.", GITLEAKS),
    _t("yandex_api_key", "yandex", _B + r"(?P<keep>AQVN)[A-Za-z0-9_\-]{35,38}" + _E, "aqvn", GITLEAKS),
    _t("digitalocean_token", "digitalocean", _B + r"(?P<keep>do[opr]_v1_)[a-f0-9]{64}" + _E, ("doo_v1_", "dop_v1_", "dor_v1_"), GITLEAKS,
       ("digitalocean-pat", "digitalocean-oauth-token", "digitalocean-refresh-token")),
    _t("databricks_token", "databricks", _B + r"(?P<keep>dapi)[a-f0-9]{32}(?:-\d)?" + _E, "dapi", GITLEAKS),
    _t("heroku_api_key_v2", "heroku", _B + r"(?P<keep>HRKU-AA)[\w-]{58}" + _E, "hrku-", GITLEAKS),
    _t("flyio_token", "flyio", _B + r"(?P<keep>fo1_)[\w-]{43}" + _E, "fo1_", GITLEAKS),
    _t("flyio_macaroon", "flyio", _B + r"(?P<keep>fm[12][ar]?_)[A-Za-z0-9+/]{100,}={0,3}", "fm", GITLEAKS),
    _t("cloudflare_origin_ca_key", "cloudflare", _B + r"(?P<keep>v1\.0-)[a-f0-9]{24}-[a-f0-9]{146}" + _E, "v1.0-", GITLEAKS),
    _t("openshift_token", "openshift", _B + r"(?P<keep>sha256~)[\w-]{43}(?![\w-])", "sha256~", GITLEAKS),
    _t("scalingo_token", "scalingo", _B + r"(?P<keep>tk-us-)[\w-]{48}(?![\w-])", "tk-us-", GITLEAKS),
    _t("vault_service_token", "vault", _B + r"(?P<keep>hvs\.)[\w-]{24,}", "hvs.", GITLEAKS),
    _t("vault_batch_token", "vault", _B + r"(?P<keep>hvb\.)[\w-]{100,}", "hvb.", GITLEAKS),
    _t("vault_legacy_token", "vault", r"(?:(?<=\\[nrt])|(?<![\w.]))(?P<keep>s\.)[A-Za-z0-9]{24}" + _E, "s.", GITLEAKS, check="random"),
    _t("terraform_cloud_token", "hashicorp",
       _B + r"(?P<keep>)[A-Za-z0-9]{14}\.atlasv1\.[\w=-]{60,70}", ".atlasv1.", GITLEAKS, anchored=False),
    _t("pulumi_token", "pulumi", _B + r"(?P<keep>pul-)[a-f0-9]{40}" + _E, "pul-", GITLEAKS),
    _t("doppler_token", "doppler", _B + r"(?P<keep>dp\.(?:pt|st|sa|ct|scim|audit)\.)[A-Za-z0-9]{40,44}" + _E, "dp.", GITLEAKS),
    _t("onepassword_secret_key", "1password",
       _B + r"(?P<keep>A3-)[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}" + _E,
       "a3-", GITLEAKS),
    _t("onepassword_service_token", "1password", _B + r"(?P<keep>ops_)eyJ[A-Za-z0-9+/]{100,}={0,3}", "ops_", GITLEAKS),
    _t("age_secret_key", "age", r"(?P<keep>AGE-SECRET-KEY-1)[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}", "age-secret-key-1", GITLEAKS),
    _t("infracost_token", "infracost", _B + r"(?P<keep>ico-)[A-Za-z0-9]{32}" + _E, "ico-", GITLEAKS),
    _t("clickhouse_secret", "clickhouse", _B + r"(?P<keep>4b1d)[A-Za-z0-9]{38}" + _E, "4b1d", GITLEAKS),
    _t("supabase_token", "supabase", _B + r"(?P<keep>sbp_)[a-f0-9]{40}" + _E, "sbp_", VENDOR),
    _t("supabase_secret_key", "supabase", _B + r"(?P<keep>sb_secret_)[\w-]{30,}", "sb_secret_", VENDOR),
    _t("netlify_pat", "netlify", _B + r"(?P<keep>nfp_)[A-Za-z0-9]{36,40}" + _E, "nfp_", VENDOR),
    _t("planetscale_token", "planetscale", _B + r"(?P<keep>pscale_(?:tkn|oauth|pw)_)[\w=.-]{32,64}", "pscale_", GITLEAKS,
       ("planetscale-api-token", "planetscale-oauth-token", "planetscale-password")),
    _t("buildkite_token", "buildkite", _B + r"(?P<keep>bkua_)[a-f0-9]{40}" + _E, "bkua_", VENDOR),
    _t("circleci_pat", "circleci", _B + r"(?P<keep>CCIPAT_)[A-Za-z0-9]{22}_[a-f0-9]{40}" + _E, "ccipat_", VENDOR),
    _t("prefect_token", "prefect", _B + r"(?P<keep>pnu_)[A-Za-z0-9]{36}" + _E, "pnu_", GITLEAKS),
    _t("harness_token", "harness", _B + r"(?P<keep>(?:pat|sat)\.)[\w-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}" + _E,
       ("pat.", "sat."), GITLEAKS),
    _t("octopus_deploy_key", "octopus", _B + r"(?P<keep>API-)[A-Z0-9]{26}" + _E, "api-", GITLEAKS, check="random"),
    # --- observability -----------------------------------------------------------------------
    _t("sentry_user_token", "sentry", _B + r"(?P<keep>sntryu_)[a-f0-9]{64}" + _E, "sntryu_", GITLEAKS),
    _t("sentry_org_token", "sentry", _B + r"(?P<keep>sntrys_)eyJ[A-Za-z0-9+/=_]{50,}", "sntrys_", GITLEAKS),
    _t("grafana_cloud_token", "grafana", _B + r"(?P<keep>glc_)[A-Za-z0-9+/]{32,400}={0,3}", "glc_", GITLEAKS),
    _t("grafana_service_account", "grafana", _B + r"(?P<keep>glsa_)[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}" + _E, "glsa_", GITLEAKS),
    _t("grafana_api_key", "grafana", _B + r"(?P<keep>eyJrIjoi)[A-Za-z0-9]{70,400}={0,3}", "eyjrijoi", GITLEAKS),
    _t("dynatrace_token", "dynatrace", _B + r"(?P<keep>dt0c01\.)[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}" + _E, "dt0c01.", GITLEAKS),
    _t("newrelic_user_key", "newrelic", _B + r"(?P<keep>NRAK-)[A-Z0-9]{27}" + _E, "nrak-", GITLEAKS),
    _t("newrelic_insert_key", "newrelic", _B + r"(?P<keep>NRII-)[\w-]{32}(?![\w-])", "nrii-", GITLEAKS),
    _t("newrelic_browser_token", "newrelic", _B + r"(?P<keep>NRJS-)[a-f0-9]{19}" + _E, "nrjs-", GITLEAKS),
    _t("newrelic_admin_key", "newrelic", _B + r"(?P<keep>NRAA-)[a-f0-9]{27}" + _E, "nraa-", VENDOR),
    # --- messaging ---------------------------------------------------------------------------
    _t("slack_app_token", "slack", _B + r"(?P<keep>xapp-)\d-[A-Z0-9]{8,}-\d{8,}-[a-z0-9]{16,}", "xapp-", GITLEAKS),
    _t("slack_config_token", "slack", _B + r"(?P<keep>xoxe(?:\.xox[bp])?-)\d-[A-Za-z0-9]{140,170}", "xoxe", GITLEAKS,
       ("slack-config-access-token", "slack-config-refresh-token")),
    _t("slack_webhook", "slack",
       r"(?P<keep>hooks\.slack\.com/(?:services|workflows|triggers)/)[A-Za-z0-9+/_-]{20,}", "hooks.slack.com/",
       GITLEAKS, ("slack-webhook-url", "slack-workflow-webhook")),
    _t("discord_webhook", "discord",
       r"(?P<keep>discord(?:app)?\.com/api/webhooks/\d{5,20}/)[\w-]{60,}", "/api/webhooks/", VENDOR, anchored=False),
    _t("discord_bot_token", "discord",
       r"(?P<keep>)[MNO](?<![\w.-][MNO])[A-Za-z0-9_-]{23,27}\.[\w-]{6}\.[\w-]{27,40}(?![\w.-])", (), DETECT_SECRETS,
       check="random", anchored=False),
    _t("telegram_bot_token", "telegram", r"(?<![\w:])(?P<keep>)\d{8,10}:AA[\w-]{33}(?![\w-])", ":aa", GITLEAKS, anchored=False),
    _t("teams_webhook", "microsoft",
       r"(?P<keep>\.webhook\.office\.com/webhookb2/)[\w@/-]{60,}", ".webhook.office.com/", GITLEAKS),
    _t("twilio_api_key", "twilio", _B + r"(?P<keep>SK)[0-9a-fA-F]{32}" + _E, "sk", GITLEAKS, check="random"),
    _t("sendgrid_api_key", "sendgrid", _B + r"(?P<keep>SG\.)[\w-]{16,32}\.[\w-]{16,64}", "sg.", GITLEAKS),
    _t("sendinblue_api_key", "brevo", _B + r"(?P<keep>x(?:keysib|smtpsib)-)[a-f0-9]{64}-[A-Za-z0-9]{16}" + _E,
       ("xkeysib-", "xsmtpsib-"), GITLEAKS, ("sendinblue-api-key", "brevo-smtp-key")),
    _t("mailgun_api_key", "mailgun", _B + r"(?P<keep>(?:pub)?key-)[a-f0-9]{32}" + _E, ("key-", "pubkey-"), GITLEAKS,
       ("mailgun-private-api-key", "mailgun-public-key")),
    _t("mailchimp_api_key", "mailchimp", _B + r"(?P<keep>)[a-f0-9]{32}-us\d{1,2}" + _E, "-us", GITLEAKS, anchored=False),
    _t("mapbox_token", "mapbox", _B + r"(?P<keep>[ps]k\.)eyJ[A-Za-z0-9_-]{40,}\.[A-Za-z0-9_-]{20,}", ("pk.eyj", "sk.eyj"), GITLEAKS),
    # --- payments & commerce -----------------------------------------------------------------
    _t("stripe_prod_key", "stripe", _B + r"(?P<keep>[sr]k_prod_)[A-Za-z0-9]{16,99}", ("sk_prod_", "rk_prod_"), GITLEAKS),
    _t("stripe_webhook_secret", "stripe", _B + r"(?P<keep>whsec_)[A-Za-z0-9+/=]{32,}", "whsec_", VENDOR),
    _t("shopify_token", "shopify", _B + r"(?P<keep>shp(?:at|ca|pa|ss)_)[a-fA-F0-9]{32}" + _E, "shp", GITLEAKS,
       ("shopify-access-token", "shopify-custom-app-token", "shopify-private-app-token", "shopify-shared-secret")),
    _t("square_token", "square", _B + r"(?P<keep>(?:EAAA|sq0atp-))[\w-]{22,60}", ("eaaa", "sq0atp-"), GITLEAKS),
    _t("square_oauth_secret", "square", _B + r"(?P<keep>sq0csp-)[\w-]{43}(?![\w-])", "sq0csp-", DETECT_SECRETS),
    _t("braintree_token", "paypal", _B + r"(?P<keep>access_token\$production\$)[a-z0-9]{16}\$[a-f0-9]{32}" + _E,
       "access_token$production$", DETECT_SECRETS),
    _t("shippo_token", "shippo", _B + r"(?P<keep>shippo_(?:live|test)_)[a-fA-F0-9]{40}" + _E, "shippo_", GITLEAKS),
    _t("duffel_token", "duffel", _B + r"(?P<keep>duffel_(?:test|live)_)[\w=-]{43}(?![\w=-])", "duffel_", GITLEAKS),
    _t("easypost_key", "easypost", _B + r"(?P<keep>EZ[AT]K)[A-Za-z0-9]{54}" + _E, ("ezak", "eztk"), GITLEAKS,
       ("easypost-api-key", "easypost-test-key")),
    _t("flutterwave_key", "flutterwave", _B + r"(?P<keep>FLW(?:SECK|PUBK)_TEST-)[a-hA-H0-9]{32}-X" + _E,
       ("flwseck_test-", "flwpubk_test-"), GITLEAKS, ("flutterwave-secret-key", "flutterwave-public-key")),
    _t("flutterwave_encryption_key", "flutterwave", _B + r"(?P<keep>FLWSECK_TEST)[a-hA-H0-9]{12}" + _E,
       "flwseck_test", GITLEAKS),
    _t("plaid_access_token", "plaid", _B + r"(?P<keep>access-(?:sandbox|development|production)-)" + _UUID + _E,
       "access-", GITLEAKS),
    # --- productivity & SaaS -----------------------------------------------------------------
    _t("linear_api_key", "linear", _B + r"(?P<keep>lin_api_)[A-Za-z0-9]{40}" + _E, "lin_api_", GITLEAKS),
    _t("notion_token", "notion", _B + r"(?P<keep>ntn_)[0-9]{11}[A-Za-z0-9]{35}" + _E, "ntn_", GITLEAKS),
    _t("notion_integration_secret", "notion", _B + r"(?P<keep>secret_)[A-Za-z0-9]{43}" + _E, "secret_", VENDOR),
    _t("figma_token", "figma", _B + r"(?P<keep>figd_)[\w-]{40,}", "figd_", VENDOR),
    _t("postman_api_key", "postman", _B + r"(?P<keep>PMAK-)[a-fA-F0-9]{24}-[a-fA-F0-9]{34}" + _E, "pmak-", GITLEAKS),
    _t("airtable_pat", "airtable", _B + r"(?P<keep>pat)[A-Za-z0-9]{14}\.[a-f0-9]{64}" + _E, "pat", GITLEAKS),
    _t("typeform_token", "typeform", _B + r"(?P<keep>tfp_)[\w.=-]{59}(?![\w.=-])", "tfp_", GITLEAKS),
    _t("frameio_token", "frameio", _B + r"(?P<keep>fio-u-)[\w=-]{64}(?![\w=-])", "fio-u-", GITLEAKS),
    _t("readme_token", "readme", _B + r"(?P<keep>rdme_)[a-z0-9]{70}" + _E, "rdme_", GITLEAKS),
    _t("adobe_client_secret", "adobe", _B + r"(?P<keep>p8e-)[A-Za-z0-9]{32}" + _E, "p8e-", GITLEAKS),
    _t("intra42_secret", "intra42", _B + r"(?P<keep>s-s4t2(?:ud|af)-)[a-f0-9]{64}" + _E, "s-s4t2", GITLEAKS),
    _t("settlemint_token", "settlemint", _B + r"(?P<keep>sm_(?:aat|pat|sat)_)[A-Za-z0-9]{16}" + _E, "sm_", GITLEAKS,
       ("settlemint-application-token", "settlemint-personal-token", "settlemint-service-token")),
    _t("maxmind_license_key", "maxmind", _B + r"(?P<keep>)[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk" + _E, "_mmk", GITLEAKS, anchored=False),
    _t("authress_key", "authress",
       _B + r"(?P<keep>(?:sc|ext|scauth|authress)_)[a-z0-9]{5,30}\.[a-z0-9]{4,6}\.acc[_-][a-z0-9-]{10,32}\.[a-z0-9+/_=-]{30,120}",
       ".acc", GITLEAKS, anchored=False),
    _t("defined_networking_token", "definednet", _B + r"(?P<keep>dnkey-)[\w=-]{26}-[\w=-]{52}(?![\w=-])", "dnkey-", GITLEAKS),
    _t("dropbox_short_lived_token", "dropbox", _B + r"(?P<keep>sl\.)[A-Za-z0-9_=-]{130,}", "sl.", GITLEAKS),
    _t("facebook_page_token", "facebook", _B + r"(?P<keep>EAA[MC])[A-Za-z0-9]{100,}", ("eaam", "eaac"), GITLEAKS),
    _t("jwt_base64", "jwt", _B + r"(?P<keep>ZXlK)[A-Za-z0-9+/_-]{60,}={0,2}", "zxlk", GITLEAKS),
)

# Key/value formats: the provider's name (a keyword) in the key, then a value of this shape.
# Shapes are written case-sensitively; gitleaks' case-insensitive classes become [A-Za-z...].
_HEX32 = r"[a-f0-9]{32}"
_AN = "A-Za-z0-9"
KEYED_FORMATS: tuple[KeyedFormat, ...] = (
    KeyedFormat("adafruit_api_key", "adafruit", ("adafruit",), r"[A-Za-z0-9_-]{32}", GITLEAKS),
    KeyedFormat("adobe_client_id", "adobe", ("adobe",), r"[a-f0-9]{32}", GITLEAKS),
    KeyedFormat("airtable_api_key", "airtable", ("airtable",), rf"[{_AN}]{{17}}", GITLEAKS),
    KeyedFormat("algolia_api_key", "algolia", ("algolia",), rf"[{_AN}]{{32}}", GITLEAKS),
    KeyedFormat("alibaba_secret_key", "alibaba", ("alibaba",), rf"[{_AN}]{{30}}", GITLEAKS),
    KeyedFormat("asana_client_id", "asana", ("asana",), r"[0-9]{16}", GITLEAKS),
    KeyedFormat("asana_client_secret", "asana", ("asana",), rf"[{_AN}]{{32}}", GITLEAKS),
    KeyedFormat("atlassian_api_token_legacy", "atlassian", ("atlassian", "confluence", "jira"),
                rf"[{_AN}]{{20}}[A-Fa-f0-9]{{4}}", GITLEAKS),
    KeyedFormat("aws_secret_access_key", "aws", ("aws",), r"[A-Za-z0-9+/]{40}", VENDOR),
    KeyedFormat("beamer_api_token", "beamer", ("beamer",), r"b_[A-Za-z0-9=_\-]{44}", GITLEAKS),
    KeyedFormat("bitbucket_client_id", "bitbucket", ("bitbucket",), rf"[{_AN}]{{32}}", GITLEAKS),
    KeyedFormat("bitbucket_client_secret", "bitbucket", ("bitbucket",), r"[A-Za-z0-9=_\-]{64}", GITLEAKS),
    KeyedFormat("bittrex_key", "bittrex", ("bittrex",), rf"[{_AN}]{{32}}", GITLEAKS),
    KeyedFormat("cisco_meraki_api_key", "cisco", ("meraki",), r"[0-9a-f]{40}", GITLEAKS),
    KeyedFormat("cloudflare_api_token", "cloudflare", ("cloudflare",), r"[A-Za-z0-9_-]{40}", GITLEAKS),
    KeyedFormat("cloudflare_global_api_key", "cloudflare", ("cloudflare",), r"[a-f0-9]{37}", GITLEAKS),
    KeyedFormat("codecov_token", "codecov", ("codecov",), rf"[{_AN}]{{32}}|{_UUID}", GITLEAKS),
    KeyedFormat("cohere_api_key", "cohere", ("cohere", "co_api_key"), rf"[{_AN}]{{40}}", GITLEAKS),
    KeyedFormat("coinbase_access_token", "coinbase", ("coinbase",), r"[A-Za-z0-9_-]{64}", GITLEAKS),
    KeyedFormat("confluent_key", "confluent", ("confluent",), rf"[{_AN}]{{16}}|[{_AN}]{{64}}", GITLEAKS),
    KeyedFormat("contentful_token", "contentful", ("contentful",), r"[A-Za-z0-9=_\-]{43}", GITLEAKS),
    KeyedFormat("datadog_api_key", "datadog", ("datadog", "dd_api", "dd_app"), rf"[a-f0-9]{{32}}|[{_AN}]{{40}}", GITLEAKS),
    KeyedFormat("discord_api_key", "discord", ("discord",), r"[a-f0-9]{64}", GITLEAKS),
    KeyedFormat("discord_client_id", "discord", ("discord",), r"[0-9]{18}", GITLEAKS),
    KeyedFormat("discord_client_secret", "discord", ("discord",), r"[A-Za-z0-9=_\-]{32}", GITLEAKS),
    KeyedFormat("droneci_token", "droneci", ("droneci", "drone_token"), rf"[{_AN}]{{32}}", GITLEAKS),
    KeyedFormat("dropbox_api_token", "dropbox", ("dropbox",), rf"[{_AN}]{{15}}", GITLEAKS),
    KeyedFormat("dropbox_long_lived_token", "dropbox", ("dropbox",), rf"[{_AN}]{{11}}AAAAAAAAAA[A-Za-z0-9\-_=]{{43}}", GITLEAKS),
    KeyedFormat("etsy_token", "etsy", ("etsy",), rf"[{_AN}]{{24}}", GITLEAKS),
    KeyedFormat("facebook_secret", "facebook", ("facebook",), _HEX32, GITLEAKS),
    KeyedFormat("facebook_access_token", "facebook", ("facebook",), r"\d{15,16}[|%][0-9A-Za-z_-]{27,40}", GITLEAKS),
    KeyedFormat("fastly_api_token", "fastly", ("fastly",), r"[A-Za-z0-9=_\-]{32}", GITLEAKS),
    KeyedFormat("finicity_secret", "finicity", ("finicity",), rf"[a-f0-9]{{32}}|[{_AN}]{{20}}", GITLEAKS),
    KeyedFormat("finnhub_token", "finnhub", ("finnhub",), rf"[{_AN}]{{20}}", GITLEAKS),
    KeyedFormat("flickr_token", "flickr", ("flickr",), rf"[{_AN}]{{32}}", GITLEAKS),
    KeyedFormat("freshbooks_token", "freshbooks", ("freshbooks",), rf"[{_AN}]{{64}}", GITLEAKS),
    KeyedFormat("gitter_token", "gitter", ("gitter",), r"[A-Za-z0-9_-]{40}", GITLEAKS),
    KeyedFormat("gocardless_token", "gocardless", ("gocardless",), r"live_[A-Za-z0-9\-_=]{40}", GITLEAKS),
    KeyedFormat("heroku_api_key", "heroku", ("heroku",), _UUID, GITLEAKS),
    KeyedFormat("hubspot_api_key", "hubspot", ("hubspot",), _UUID_UPPER + "|" + _UUID, GITLEAKS),
    KeyedFormat("intercom_token", "intercom", ("intercom",), r"[A-Za-z0-9=_\-]{60}", GITLEAKS),
    KeyedFormat("jfrog_key", "jfrog", ("jfrog", "artifactory", "bintray", "xray"),
                rf"[{_AN}]{{73}}|[{_AN}]{{64}}", GITLEAKS),
    KeyedFormat("kraken_token", "kraken", ("kraken",), r"[A-Za-z0-9/=_+\-]{80,90}", GITLEAKS),
    KeyedFormat("kucoin_key", "kucoin", ("kucoin",), r"[a-f0-9]{24}|" + _UUID, GITLEAKS),
    KeyedFormat("launchdarkly_token", "launchdarkly", ("launchdarkly",), r"[A-Za-z0-9=_\-]{40}", GITLEAKS),
    KeyedFormat("linear_client_secret", "linear", ("linear",), _HEX32, GITLEAKS),
    KeyedFormat("linkedin_client_secret", "linkedin", ("linkedin", "linked_in", "linked-in"),
                rf"[{_AN}]{{14}}|[{_AN}]{{16}}", GITLEAKS),
    KeyedFormat("lob_api_key", "lob", ("lob",), r"(?:live|test)_(?:pub_)?[a-f0-9]{31,35}", GITLEAKS),
    KeyedFormat("looker_client_secret", "looker", ("looker",), rf"[{_AN}]{{20}}|[{_AN}]{{24}}", GITLEAKS),
    KeyedFormat("mailgun_signing_key", "mailgun", ("mailgun",), r"[a-h0-9]{32}-[a-h0-9]{8}-[a-h0-9]{8}", GITLEAKS),
    KeyedFormat("mattermost_token", "mattermost", ("mattermost",), rf"[{_AN}]{{26}}", GITLEAKS),
    KeyedFormat("messagebird_token", "messagebird", ("messagebird", "message_bird", "message-bird"),
                rf"[{_AN}]{{25}}|{_UUID}", GITLEAKS),
    KeyedFormat("netlify_token", "netlify", ("netlify",), r"[A-Za-z0-9=_\-]{40,46}", GITLEAKS),
    KeyedFormat("newrelic_user_api_id", "newrelic", ("newrelic", "new_relic", "new-relic"), rf"[{_AN}]{{64}}", GITLEAKS),
    KeyedFormat("nytimes_token", "nytimes", ("nytimes", "newyorktimes"), r"[A-Za-z0-9=_\-]{32}", GITLEAKS),
    KeyedFormat("okta_token", "okta", ("okta",), r"00[\w=\-]{40}", GITLEAKS),
    KeyedFormat("plaid_key", "plaid", ("plaid",), rf"[{_AN}]{{24}}|[{_AN}]{{30}}", GITLEAKS),
    KeyedFormat("privateai_token", "privateai", ("privateai", "private_ai", "private-ai"), rf"[{_AN}]{{32}}", GITLEAKS),
    KeyedFormat("rapidapi_token", "rapidapi", ("rapidapi",), r"[A-Za-z0-9_-]{50}", GITLEAKS),
    KeyedFormat("sendbird_token", "sendbird", ("sendbird",), r"[a-f0-9]{40}|" + _UUID, GITLEAKS),
    KeyedFormat("sentry_access_token", "sentry", ("sentry",), r"[a-f0-9]{64}", GITLEAKS),
    KeyedFormat("sidekiq_secret", "sidekiq", ("contribsys",), r"[a-f0-9]{8}:[a-f0-9]{8}", GITLEAKS),
    KeyedFormat("snyk_token", "snyk", ("snyk",), _UUID, GITLEAKS),
    KeyedFormat("sonar_token", "sonar", ("sonar",), r"(?:squ_|sqp_|sqa_)?[A-Za-z0-9=_\-]{40}", GITLEAKS),
    KeyedFormat("squarespace_token", "squarespace", ("squarespace",), _UUID, GITLEAKS),
    KeyedFormat("sumologic_access_id", "sumologic", ("sumo",), rf"su[{_AN}]{{12}}", GITLEAKS),
    KeyedFormat("sumologic_access_token", "sumologic", ("sumo",), rf"[{_AN}]{{64}}", GITLEAKS),
    KeyedFormat("travisci_token", "travisci", ("travis",), rf"[{_AN}]{{22}}", GITLEAKS),
    KeyedFormat("twitch_token", "twitch", ("twitch",), rf"[{_AN}]{{30}}", GITLEAKS),
    KeyedFormat("twitter_key", "twitter", ("twitter",),
                rf"[{_AN}]{{25}}|[{_AN}]{{45}}|[{_AN}]{{50}}|[0-9]{{15,25}}-[{_AN}]{{20,40}}|A{{22}}[A-Za-z0-9%]{{80,100}}",
                GITLEAKS),
    KeyedFormat("yandex_aws_token", "yandex", ("yandex",), r"YC[A-Za-z0-9_\-]{38}", GITLEAKS),
    KeyedFormat("zendesk_secret", "zendesk", ("zendesk",), rf"[{_AN}]{{40}}", GITLEAKS),
    KeyedFormat("azure_devops_token", "azure", ("azure_devops", "vsts"), r"[a-z2-7]{52}", RAGIT),
    KeyedFormat("twilio_auth_token", "twilio", ("twilio",), r"[a-f0-9]{32}", VENDOR),
    KeyedFormat("mistral_api_key", "mistral", ("mistral",), rf"[{_AN}]{{32}}", VENDOR),
)
# fmt: on

# Formats the structural rules in masking.py cover (PEM blocks, URLs, headers, assignments);
# listed here so that the whole table can be counted and checked against the corpus.
STRUCTURAL_FORMATS: dict[str, tuple[str, ...]] = {
    "private_key_block": ("rsa-private-key", "ec-private-key", "dsa-private-key", "openssh-private-key",
                          "pkcs8-private-key", "encrypted-private-key", "pgp-private-key-block"),
    "putty_private_key": ("putty-private-key",),
    "openai_key": ("openai-api-key",),
    "openai_scoped_key": ("openai-project-key", "openai-service-account-key", "openai-admin-key"),
    "github_pat": ("github-pat",),
    "github_token": ("github-oauth", "github-app-user-token", "github-app-server-token",
                     "github-fine-grained-pat"),
    "aws_access_key": ("aws-access-key-id",),
    "slack_token": ("slack-bot-token", "slack-user-token", "slack-legacy-token"),
    "stripe_key": ("stripe-secret-key", "stripe-restricted-key"),
    "google_api_key": ("gcp-api-key",),
    "jwt": ("jwt",),
    "url_password": ("url-credentials", "redis-url-password"),
    "authorization_header": ("authorization-bearer", "authorization-basic", "authorization-token"),
    "bearer_token": ("bearer-token",),
    "curl_user": ("curl-basic-auth",),
    "netrc_password": ("netrc-password",),
    "kubernetes_secret": ("kubernetes-secret-data",),
    "xml_secret": ("xml-password", "nuget-config-password"),
    "dsn_password": ("connection-string-password",),
    "secret_assignment": ("generic-password", "generic-secret", "generic-token", "generic-api-key",
                          "db-password", "client-secret", "encryption-key", "session-secret"),
}


def all_format_ids() -> list[str]:
    """Every format id in the table, in table order (token, keyed, structural)."""
    ids = [fid for fmt in TOKEN_FORMATS for fid in fmt.format_ids()]
    ids += [fmt.label.replace("_", "-") for fmt in KEYED_FORMATS]
    ids += [fid for group in STRUCTURAL_FORMATS.values() for fid in group]
    return ids
