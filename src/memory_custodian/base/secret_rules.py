"""The secret detector's rules as data: each kind's pattern and the literals every match contains.

Built from what gitleaks' default rules (MIT) and detect-secrets' plugins cover, written as
Python regular expressions with a literal trigger each, so that a text compiles only the patterns
whose trigger it holds (see `secrets`). A rule with a `value` group has that group checked as a
literal value (no placeholder, no variable reference) before it counts.
"""

from __future__ import annotations

_B64 = "A-Za-z0-9+/"
_URL = r"A-Za-z0-9_\-"

# A Kubernetes `kind: Secret` manifest and a base64 value under its `data:`, in either order and
# within one YAML document (a `---` line ends the search).
_K8S_KIND = r"\bkind:[ \t]*[\"']?[Ss]ecret[\"']?[ \t]*(?:\n|\Z)"
_K8S_DATA = (r"\bdata:[ \t]*\n(?:(?![ \t]*---)[^\n]*\n){0,20}?[ \t]+[\w.-]+:[ \t]*(?:[|>][-+]?[ \t]*\n[ \t]*)?[\"']?"
             r"(?P<value>(?=[A-Za-z0-9+/]*[0-9+])[A-Za-z0-9+/]{12,}={0,3})[\"']?[ \t]*(?=\n|\Z)")
_K8S_GAP = r"(?:(?![ \t]*---)[^\n]*\n){0,30}?[ \t]*"

# (kind, pattern, triggers) — the order matters only where one kind's match starts another's
# (Anthropic keys start like OpenAI's), so the more specific pattern comes first.
RULES: list[tuple[str, str, tuple[str, ...]]] = [
    ("private key block", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----", ("-----BEGIN ",)),
    ("PuTTY private key", r"PuTTY-User-Key-File-\d+:", ("PuTTY-User-Key-File-",)),
    ("age secret key", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}", ("AGE-SECRET-KEY-1",)),
    ("AWS access key", r"\b(?:AKIA|ASIA|ABIA|ACCA|AROA|AIDA)[0-9A-Z]{16}\b",
     ("AKIA", "ASIA", "ABIA", "ACCA", "AROA", "AIDA")),
    ("AWS secret access key",
     r"(?i)\baws_?secret_?(?:access_?)?key\b[\"']?[ \t]*[:=][ \t]*[\"']?[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])",
     (":", "=")),
    ("GitHub token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b",
     ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
    ("GitLab token", r"\bgl(?:pat|dt|ptt|rt|cbt|imt|oas|agent|ft|soat|ffct)-[A-Za-z0-9_-]{20,}",
     ("glpat-", "gldt-", "glptt-", "glrt-", "glcbt-", "glimt-", "gloas-", "glagent-", "glft-", "glsoat-",
      "glffct-")),
    # a Slack token carries a long digit run after its prefix (`xoxo-hugs` in a URL, `xoxb-12345-abc`
    # in docs are not one); legacy tokens are three digit runs and hex, configuration tokens long
    ("Slack token", r"\bxox(?:[abeoprs]-(?:\d-)?\d{8,14}-[A-Za-z0-9][A-Za-z0-9-]{7,}|[os]-\d+-\d+-\d+-[a-fA-F0-9]{8,}"
                    r"|[ebp]-\d-[A-Za-z0-9]{100,})", ("xox",)),
    ("Slack app token", r"\bxapp-\d-[A-Z0-9]+-\d+-[A-Za-z0-9]+", ("xapp-",)),
    ("Slack webhook URL", r"\bhooks\.slack\.com/(?:services|workflows|triggers)/T[A-Za-z0-9]+/[A-Za-z0-9/]+",
     ("hooks.slack.com/",)),
    # pk_ keys are publishable by design; only secret (sk_) and restricted (rk_) keys are credentials
    ("Stripe key", r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}", ("k_live_", "k_test_")),
    # keys, admin keys and OAuth tokens all carry a typed prefix (`api03-`); a prefix of one leaks it too
    ("Anthropic API key", r"\bsk-ant-[a-z]+\d\d-[A-Za-z0-9_-]{32,}", ("sk-ant-",)),
    # legacy keys are one unbroken alphanumeric run, so hyphenated prose such as
    # `sk-learn-compatible-estimators` never matches; project keys carry their prefix
    ("OpenAI API key",
     r"\bsk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}|(?=[A-Za-z0-9]*\d)[A-Za-z0-9]{32,}(?![A-Za-z0-9_-]))",
     ("sk-",)),
    ("Groq API key", r"\bgsk_[A-Za-z0-9]{48,}", ("gsk_",)),
    ("xAI API key", r"\bxai-[A-Za-z0-9]{70,}", ("xai-",)),
    ("Perplexity API key", r"\bpplx-[A-Za-z0-9]{40,}", ("pplx-",)),
    ("Replicate API token", r"\br8_[A-Za-z0-9]{37,}", ("r8_",)),
    ("Google API key", r"\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])", ("AIza",)),
    ("Google OAuth token", r"\bya29\.[0-9A-Za-z_-]{20,}", ("ya29.",)),
    ("Google OAuth client secret", r"\bGOCSPX-[0-9A-Za-z_-]{20,}", ("GOCSPX-",)),
    ("JWT", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", ("eyJ",)),
    ("Azure storage account key", rf"AccountKey=[{_B64}]{{80,90}}={{0,2}}", ("AccountKey=",)),
    ("Azure SAS token", r"[?&]sig=[A-Za-z0-9%+/=]{30,}", ("sig=",)),
    ("Azure AD client secret", r"(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])",
     ("Q~",)),
    ("npm token", r"\bnpm_[A-Za-z0-9]{36}\b", ("npm_",)),
    ("PyPI token", rf"\bpypi-AgEIcHlwaS5vcmc[{_URL}]{{50,}}", ("pypi-AgEIcHlwaS5vcmc",)),
    ("RubyGems API key", r"\brubygems_[a-f0-9]{48}\b", ("rubygems_",)),
    ("NuGet API key", r"\boy2[a-z0-9]{43}\b", ("oy2",)),
    ("Clojars token", r"\bCLOJARS_[a-z0-9]{60}\b", ("CLOJARS_",)),
    # exactly 34 letters: `hf_requiredCharacteristicTypes…` in Objective-C is a longer word
    ("Hugging Face token", r"\b(?:hf_|api_org_)[A-Za-z]{34}(?![A-Za-z0-9_])", ("hf_", "api_org_")),
    ("Twilio API key", r"\bSK[0-9a-fA-F]{32}\b", ("SK",)),
    ("SendGrid API key", rf"\bSG\.[{_URL}]{{20,24}}\.[{_URL}]{{39,50}}", ("SG.",)),
    ("Mailgun key", r"\b(?:pub)?key-[0-9a-f]{32}\b", ("key-",)),
    ("Mailchimp API key", r"\b[0-9a-f]{32}-us\d{1,2}\b", ("-us",)),
    ("DigitalOcean token", r"\bdo[opr]_v1_[a-f0-9]{64}\b", ("_v1_",)),
    ("Shopify token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b", ("shp",)),
    ("Discord bot token", r"\b[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}(?![A-Za-z0-9_-])", (".",)),
    ("Discord webhook URL", rf"discord(?:app)?\.com/api/webhooks/\d+/[{_URL}]{{30,}}", ("/api/webhooks/",)),
    ("Square token", r"\b(?:EAAA[A-Za-z0-9_-]{60}|sq0(?:atp|csp|idp)-[0-9A-Za-z_-]{22,43})",
     ("EAAA", "sq0")),
    ("Atlassian API token", rf"\bATATT3[{_URL}=]{{100,}}", ("ATATT3",)),
    ("Databricks token", r"\bdapi[a-f0-9]{32}(?:-\d)?\b", ("dapi",)),
    ("Vault token", rf"\bhv[sbr]\.[{_URL}]{{24,}}", ("hvs.", "hvb.", "hvr.")),
    ("Linear API key", r"\blin_(?:api|oauth)_[A-Za-z0-9]{40}\b", ("lin_api_", "lin_oauth_")),
    ("Postman API key", r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b", ("PMAK-",)),
    ("Doppler token", r"\bdp\.(?:pt|st|ct|sa|scim|audit)\.[A-Za-z0-9_-]{40,}",
     ("dp.pt.", "dp.st.", "dp.ct.", "dp.sa.", "dp.scim.", "dp.audit.")),
    ("Grafana token",
     rf"\b(?:glc_[{_B64}]{{32,}}={{0,2}}|glsa_[A-Za-z0-9]{{32}}_[A-Fa-f0-9]{{8}}|eyJrIjoi[{_B64}]{{50,}}={{0,2}})",
     ("glc_", "glsa_", "eyJrIjoi")),
    ("New Relic key", r"\bNR(?:AK|II|JS|AA)-[A-Za-z0-9-]{19,40}", ("NRAK-", "NRII-", "NRJS-", "NRAA-")),
    ("Telegram bot token", r"\b\d{8,10}:AA[0-9A-Za-z_-]{32,33}(?![0-9A-Za-z_-])", (":AA",)),
    ("Heroku API key", r"\bHRKU-[A-Za-z0-9_-]{40,}", ("HRKU-",)),
    ("Alibaba access key", r"\bLTAI[A-Za-z0-9]{20}\b", ("LTAI",)),
    ("Dropbox token", r"\bsl\.[A-Za-z0-9_-]{130,}", ("sl.",)),
    ("Fly.io token", r"\bfo1_[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])", ("fo1_",)),
    ("PlanetScale token", r"\bpscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.=-]{32,64}", ("pscale_",)),
    ("Pulumi token", r"\bpul-[a-f0-9]{40}\b", ("pul-",)),
    ("Terraform Cloud token", r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}", (".atlasv1.",)),
    ("Sentry token", r"\b(?:sntrys_eyJ[A-Za-z0-9+/=_-]{40,}|sntryu_[a-f0-9]{64})", ("sntrys_", "sntryu_")),
    ("Notion token", r"\b(?:secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{46})\b", ("secret_", "ntn_")),
    ("Airtable token", r"\bpat[A-Za-z0-9]{14}\.[a-f0-9]{64}\b", ("pat",)),
    ("Figma token", r"\bfig[dou]_[A-Za-z0-9_-]{38,}", ("figd_", "figo_", "figu_")),
    ("Mapbox secret token", r"\bsk\.eyJ[A-Za-z0-9_.-]{60,}", ("sk.eyJ",)),
    ("Docker Hub token", r"\bdckr_(?:pat|oat)_[A-Za-z0-9_-]{27,}", ("dckr_",)),
    ("Contentful token", r"\bCFPAT-[A-Za-z0-9_-]{43}", ("CFPAT-",)),
    ("Supabase token", r"\bsb(?:p|_secret)_[A-Za-z0-9_]{32,}", ("sbp_", "sb_secret_")),
    ("Prefect API key", r"\bpnu_[A-Za-z0-9]{36}\b", ("pnu_",)),
    ("Typeform token", r"\btfp_[A-Za-z0-9_.=-]{59}", ("tfp_",)),
    ("Basic auth header", rf"\b(?:Basic|basic|BASIC)[ \t]+(?=[{_B64}]*[0-9+/])[{_B64}]{{8,}}={{0,2}}(?![{_B64}=])",
     ("Basic", "basic", "BASIC")),
    ("Bearer token", r"\b(?:Bearer|bearer|BEARER)[ \t]+(?=[A-Za-z0-9._~+/-]*\d)(?=[A-Za-z0-9._~+/-]*[A-Za-z])"
                     r"[A-Za-z0-9._~+/-]{20,}=*(?![A-Za-z0-9._~+/=-])", ("Bearer", "bearer", "BEARER")),
    # the command may go on over backslash-continued lines; a quoted `"secret:"` is a password too;
    # each command's options are searched only up to the next command, so a run of them stays linear
    ("password on a curl command line",
     r"\bcurl\b(?:(?!curl\b)[^\n\\]|\\[\s\S])*?[ \t](?:-u|--user)(?:=|[ \t]*)"
     r"(?:[\"']?[^\s:\"']*:[\"']?(?P<value>[^\s\"':]+)|[\"'][^\s:\"']{6,}:[\"'])", ("curl",)),
    ("password on a mysql command line",
     r"\b(?:mysql|mysqldump|mysqladmin|mariadb)\b(?:(?!mysql|mariadb)[^\n])*?"
     r"[ \t](?:-p|--password=)(?P<value>[^\s\"'-][^\s\"']*)",
     ("mysql", "mariadb")),
    # a scheme-less or `Token` header value; Bearer and Basic have rules of their own above, and an
    # AWS SigV4 header carries a key ID and a one-off signature (the AWS rule sees a real key ID)
    ("authorization header",
     r"\b[Aa]uthorization[\"']?[ \t]*:[ \t]*[\"']?(?!(?i:bearer|basic|aws4-hmac-sha256)\b)(?:(?i:token|api-token)[ \t]+)?"
     r"(?P<value>(?=[A-Za-z0-9+/=~@._-]*\d)[A-Za-z0-9+/=~@._-]{16,})", ("uthorization",)),
] + [  # kinds found by their structure or a vendor's own prefix
    ("Kubernetes Secret data", _K8S_KIND + _K8S_GAP + _K8S_DATA, ("kind:",)),
    ("Kubernetes Secret data", _K8S_DATA + r"[^\n]*\n" + _K8S_GAP + _K8S_KIND, ("kind:",)),
    ("Bundler registry credentials",
     r"\bBUNDLE_[A-Z0-9_]+__[A-Z]+[\"']?[ \t]*[:=][ \t]*[\"']?[^\s\"':]+:(?P<value>[^\s\"';&]+)", ("BUNDLE_",)),
    ("Claude Code session URL", r"\bhttps?://(?i:claude\.ai)/code/session_[A-Za-z0-9]{16,}", ("/code/session_",)),
    (".NET config password",
     r"<add\s+key=\"[^\"]*(?i:password|secret|token|apikey)[^\"]*\"\s+value=\"(?P<value>[^\"]{6,})\"", ("<add",)),
    ("SonarQube token", r"\bsq[upa]_[A-Za-z0-9]{40}\b", ("sqp_", "squ_", "sqa_")),
    ("Sourcegraph token", r"\bsgp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}\b", ("sgp_",)),
    ("1Password secret key", r"\bA3-[A-Z0-9]{6}(?:-[A-Z0-9]{5,11}){4,5}\b", ("A3-",)),
    ("1Password service account token", r"\bops_eyJ[A-Za-z0-9+/]{100,}={0,3}", ("ops_eyJ",)),
    ("Cloudflare origin CA key", r"\bv1\.0-[a-f0-9]{24}-[a-f0-9]{100,}", ("v1.0-",)),
    ("Intra 42 client secret", r"\bs-s4t2(?:ud|af)-[a-f0-9]{64}\b", ("s-s4t2",)),
    ("Azure Data Factory integration key", r"\bIR@[0-9A-Za-z-]{36}@[^@\s]+@[^@\s]*@[A-Za-z0-9+/]{43}=", ("IR@",)),
    ("Infracost API key", r"(?<![\w.-])ico-[A-Za-z0-9]{32}(?![A-Za-z0-9])", ("ico-",)),
    ("Sumo Logic access ID",
     r"(?:sumo|SUMO|Sumo)[A-Za-z0-9_.]{0,30}?(?:access_?id|ACCESS_?ID|accessId)[\"']?[ \t]*[:=][ \t]*[\"']?su[A-Za-z0-9]{12}\b",
     ("sumo", "SUMO", "Sumo")),
    # a DER private key pasted without its PEM lines: the version field follows the length (certificates differ)
    ("private key (DER)", rf"\bMII[{_B64}]{{3}}IBA[AD][{_B64}]{{60,}}={{0,2}}", ("MII",)),
]
