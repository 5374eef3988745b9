"""The secret detector's rules as data: each kind's pattern and the literals every match contains.

Built from what gitleaks' default rules (MIT) and detect-secrets' plugins cover, written as
Python regular expressions with a literal trigger each, so that a text compiles only the patterns
whose trigger it holds (see `secrets`). A rule with a `value` group has that group checked as a
literal value (no placeholder, no variable reference) before it counts.
"""

from __future__ import annotations

_B64 = "A-Za-z0-9+/"
_URL = r"A-Za-z0-9_\-"

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
    # a Slack token carries a digit run after its prefix: `xoxo-hugs` in a URL is not one
    ("Slack token", r"\bxox[abeprs]-(?:\d+-)+[A-Za-z0-9-]{6,}", ("xox",)),
    ("Slack app token", r"\bxapp-\d-[A-Z0-9]+-\d+-[A-Za-z0-9]+", ("xapp-",)),
    ("Slack webhook URL", r"https://hooks\.slack\.com/(?:services|workflows|triggers)/T[A-Za-z0-9]+/[A-Za-z0-9/]+",
     ("https://hooks.slack.com/",)),
    # pk_ keys are publishable by design; only secret (sk_) and restricted (rk_) keys are credentials
    ("Stripe key", r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}", ("k_live_", "k_test_")),
    ("Anthropic API key", r"\bsk-ant-[A-Za-z0-9_-]{20,}", ("sk-ant-",)),
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
    ("Hugging Face token", r"\b(?:hf_|api_org_)[A-Za-z0-9]{34,}\b", ("hf_", "api_org_")),
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
    ("Grafana token", rf"\b(?:glc_[{_B64}]{{32,}}={{0,2}}|glsa_[A-Za-z0-9]{{32}}_[A-Fa-f0-9]{{8}}|eyJrIjoi[{_B64}]{{50,}}={{0,2}})",
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
    ("Basic auth header", rf"\b(?:Basic|basic|BASIC)[ \t]+(?=[{_B64}]*[0-9+/])[{_B64}]{{12,}}={{0,2}}(?![{_B64}=])",
     ("Basic", "basic", "BASIC")),
    ("Bearer token", r"\b(?:Bearer|bearer|BEARER)[ \t]+(?=[A-Za-z0-9._~+/-]*\d)(?=[A-Za-z0-9._~+/-]*[A-Za-z])"
                     r"[A-Za-z0-9._~+/-]{20,}=*(?![A-Za-z0-9._~+/=-])", ("Bearer", "bearer", "BEARER")),
    ("password on a curl command line",
     r"\bcurl\b[^\n]*?[ \t](?:-u|--user)[ \t]*[\"']?[^\s:\"']+:(?P<value>[^\s\"']+)", ("curl",)),
    ("password on a mysql command line",
     r"\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n]*?[ \t](?:-p|--password=)(?P<value>[^\s\"'-][^\s\"']*)",
     ("mysql", "mariadb")),
]
