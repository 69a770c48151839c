"""The secret shapes the redactor hides (``redact.py``'s rule 2), as data: one row per rule.

Where they come from. The rows restate, in this table's own form, facts of two public rule sets
that secret scanners run on code and logs:

- gitleaks **v8.30.1**, ``config/gitleaks.toml`` (github.com/gitleaks/gitleaks): its rules whose
  match is the secret itself, recognisable by its shape alone (a fixed prefix, a fixed layout).
  The row's ``rule`` is gitleaks' rule id; a row that serves several of its ids names the first.
- detect-secrets **v1.5.0**, ``detect_secrets/plugins`` (github.com/Yelp/detect-secrets): the
  plugins with a shape gitleaks has not (Telegram's 8-10 digits form, Twilio's ``AC``, Square's
  ``sq0csp-``, Artifactory's ``AKC``, Discord's bot token, Mailchimp's key), and the
  ``KeywordDetector``'s idea that a value assigned to a name like ``password`` is one: the names
  are ``redact.is_secret_name``'s words, shared with the arguments and the params.

What is not taken, and why:

- gitleaks' rules that need a service's name beside the value (``twitter ... = <45 chars>``,
  ``heroku = <uuid>``, about half of its rules): a name like ``TWITTER_API_KEY``, ``--wandb-key``
  or ``datadog_token`` is a secret's by ``is_secret_name`` already, whatever the service; a bare
  service word would hide every ``name = value`` of a tool named after one.
- shapes that are ordinary facts too: a bare 40-hex string (Sourcegraph's old token, and a git
  commit id), a UUID (Heroku's old key, and a run's id), detect-secrets' high-entropy strings
  (checksums, base64 data, model hashes) and public IP addresses (a message's host).
- ``AP<hex>`` (detect-secrets' second Artifactory form): it starts English words' acronyms.

Each prefix row is ``(rule, prefixes, rest)``: the secret is one of ``prefixes`` (as the service
issues it, case and all) followed by the regular expression ``rest``, not preceded by a letter
or a digit (``left``: a JSON Web Token, not by ``_`` or ``-`` either) and not followed by one.
The rows are compiled once, at import, into one expression grouped by first character: a
position inside a word costs one test, a word's start one per distinct first character (not one
per rule); each rule starts only where a match can begin. ``CONTEXT_RULES`` are the shapes
without a fixed prefix, each tried only when the text holds one of its ``needles``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple


class PrefixRule(NamedTuple):
    rule: str  # the upstream rule's id (gitleaks), or the plugin's (detect-secrets: ``ds:``)
    prefixes: tuple[str, ...]
    rest: str  # a regular expression, after the prefix
    left: str = "A-Za-z0-9"  # what may not come right before the prefix (a character class)


_LEFT = "A-Za-z0-9"  # every rule's left boundary, at least


class ContextRule(NamedTuple):
    rule: str
    needles: tuple[str, ...]  # one of these is in any text the rule can match
    pattern: str


_ALNUM = "[A-Za-z0-9]"
_HEX = "[a-fA-F0-9]"

PREFIX_RULES: tuple[PrefixRule, ...] = (
    PrefixRule("1password-secret-key", ("A3-",),
               r"[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})(?:-[A-Z0-9]{5}){3}"),
    PrefixRule("1password-service-account-token", ("ops_eyJ",), r"[A-Za-z0-9+/]{250,}={0,3}"),
    PrefixRule("adobe-client-secret", ("p8e-",), _ALNUM + "{32}"),
    PrefixRule("age-secret-key", ("AGE-SECRET-KEY-1",), "[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
    PrefixRule("airtable-personnal-access-token", ("pat",), _ALNUM + r"{14}\.[a-f0-9]{64}"),
    PrefixRule("alibaba-access-key-id", ("LTAI",), _ALNUM + "{20}"),
    # OpenAI's (sk-proj-, sk-svcacct-...) and Anthropic's (sk-ant-api03-...) keys; detect-secrets'
    # OpenAIDetector.
    PrefixRule("openai-api-key", ("sk-",), "[A-Za-z0-9_-]{8,}"),
    PrefixRule("artifactory-api-key", ("AKC",), _ALNUM + "{10,}"),  # ds: ArtifactoryDetector
    PrefixRule("artifactory-reference-token", ("cmVmd",), _ALNUM + "{59}"),
    PrefixRule("authress-service-client-access-key", ("sc_", "ext_", "scauth_", "authress_"),
               r"[A-Za-z0-9]{5,30}\.[A-Za-z0-9]{4,6}\.acc[_-][A-Za-z0-9-]{10,32}"
               r"\.[A-Za-z0-9+/_=-]{30,120}"),
    PrefixRule("aws-access-token", ("AKIA",), "[0-9A-Z]{12,}"),
    # The other AWS identifiers' prefixes (gitleaks' A3T, ASIA, ABIA, ACCA; detect-secrets' list).
    PrefixRule("aws-access-token:other-prefixes",
               ("A3T", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AROA", "AIPA", "ANPA", "ANVA",
                "APKA"), "[A-Z0-9]{16,17}"),
    PrefixRule("aws-amazon-bedrock-api-key-long-lived", ("ABSK",), r"[A-Za-z0-9+/]{109,269}={0,2}"),
    PrefixRule("aws-amazon-bedrock-api-key-short-lived",
               ("bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t",), r"[A-Za-z0-9+/=%_-]*"),
    PrefixRule("clickhouse-cloud-api-secret-key", ("4b1d",), _ALNUM + "{38}"),
    PrefixRule("clojars-api-token", ("CLOJARS_",), _ALNUM + "{60}"),
    PrefixRule("cloudflare-origin-ca-key", ("v1.0-",), "[a-f0-9]{24}-[a-f0-9]{146}"),
    PrefixRule("databricks-api-token", ("dapi",), "[a-f0-9]{32}(?:-[0-9])?"),
    PrefixRule("digitalocean-pat", ("dop_v1_", "doo_v1_", "dor_v1_"), "[a-f0-9]{64}"),
    PrefixRule("doppler-api-token", ("dp.pt.",), _ALNUM + "{43}"),
    PrefixRule("duffel-api-token", ("duffel_test_", "duffel_live_"), "[A-Za-z0-9_=-]{43}"),
    PrefixRule("dynatrace-api-token", ("dt0c01.",), _ALNUM + r"{24}\." + _ALNUM + "{64}"),
    PrefixRule("easypost-api-token", ("EZAK", "EZTK"), _ALNUM + "{54}"),
    PrefixRule("facebook-page-access-token", ("EAAM", "EAAC"), _ALNUM + "{100,}"),
    PrefixRule("flutterwave-secret-key", ("FLWSECK_TEST-", "FLWPUBK_TEST-"),
               "[a-hA-H0-9]{12}(?:[a-hA-H0-9]{20}-X)?"),
    PrefixRule("flyio-access-token", ("fo1_",), "[A-Za-z0-9_-]{43}"),
    PrefixRule("flyio-access-token:macaroon", ("fm1a_", "fm1r_", "fm2_"),
               r"[A-Za-z0-9+/]{100,}={0,3}"),
    PrefixRule("frameio-api-token", ("fio-u-",), "[A-Za-z0-9_=-]{64}"),
    PrefixRule("gcp-api-key", ("AIza",), "[0-9A-Za-z_-]{30,}"),
    PrefixRule("github-pat", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), _ALNUM + "{8,}"),
    PrefixRule("github-fine-grained-pat", ("github_pat_",), "[A-Za-z0-9_]{8,}"),
    # gitleaks' glpat- rules, the routable form's ".<9>" suffix included; detect-secrets'
    # GitLabTokenDetector.
    PrefixRule("gitlab-pat", ("glpat-",), r"[A-Za-z0-9_-]{8,300}(?:\.[0-9a-z]{9})?"),
    PrefixRule("gitlab-cicd-job-token", ("glcbt-",), "[0-9a-zA-Z]{1,5}_[0-9a-zA-Z_-]{20}"),
    PrefixRule("gitlab-deploy-token", ("gldt-", "glffct-", "glft-", "glsoat-"),
               "[0-9a-zA-Z_-]{20}"),
    PrefixRule("gitlab-runner-authentication-token", ("glrt-",),
               r"(?:t[0-9]_)?[0-9a-zA-Z_-]{20,300}(?:\.[0-9a-z]{9})?"),
    PrefixRule("gitlab-incoming-mail-token", ("glimt-",), "[0-9a-zA-Z_-]{25}"),
    PrefixRule("gitlab-kubernetes-agent-token", ("glagent-",), "[0-9a-zA-Z_-]{50}"),
    PrefixRule("gitlab-oauth-app-secret", ("gloas-",), "[0-9a-zA-Z_-]{64}"),
    PrefixRule("gitlab-ptt", ("glptt-",), "[0-9a-f]{40}"),
    PrefixRule("gitlab-rrt", ("GR1348941",), "[A-Za-z0-9_-]{20}"),
    PrefixRule("gitlab-session-cookie", ("_gitlab_session=",), "[0-9a-z]{32}"),
    PrefixRule("grafana-api-key", ("eyJrIjoi",), _ALNUM + "{70,400}={0,3}"),
    PrefixRule("grafana-cloud-api-token", ("glc_",), r"[A-Za-z0-9+/]{32,400}={0,3}"),
    PrefixRule("grafana-service-account-token", ("glsa_",), _ALNUM + "{32}_" + _HEX + "{8}"),
    PrefixRule("harness-api-key", ("pat.", "sat."),
               r"[A-Za-z0-9_-]{22}\." + _ALNUM + r"{24}\." + _ALNUM + "{20}"),
    PrefixRule("heroku-api-key-v2", ("HRKU-AA",), "[0-9a-zA-Z_-]{58}"),
    PrefixRule("huggingface-access-token", ("hf_",), _ALNUM + "{8,}"),
    PrefixRule("huggingface-organization-api-token", ("api_org_",), "[A-Za-z]{34}"),
    PrefixRule("infracost-api-token", ("ico-",), _ALNUM + "{32}"),
    PrefixRule("intra42-client-secret", ("s-s4t2ud-", "s-s4t2af-"), "[a-f0-9]{64}"),
    PrefixRule("linear-api-key", ("lin_api_",), _ALNUM + "{40}"),
    PrefixRule("new-relic-user-api-key", ("NRAK-",), _ALNUM + "{27}"),
    PrefixRule("new-relic-insert-key", ("NRII-",), "[A-Za-z0-9-]{32}"),
    PrefixRule("new-relic-browser-api-token", ("NRJS-",), "[a-f0-9]{19}"),
    PrefixRule("notion-api-token", ("ntn_",), "[0-9]{11}" + _ALNUM + "{35}"),
    PrefixRule("npm-access-token", ("npm_",), _ALNUM + "{30,}"),  # ds: NpmDetector
    PrefixRule("octopus-deploy-api-key", ("API-",), "[A-Z0-9]{26}"),
    PrefixRule("openshift-user-token", ("sha256~",), "[A-Za-z0-9_-]{43}"),
    PrefixRule("perplexity-api-key", ("pplx-",), _ALNUM + "{48}"),
    PrefixRule("planetscale-api-token", ("pscale_tkn_", "pscale_oauth_", "pscale_pw_"),
               r"[A-Za-z0-9_=.-]{32,64}"),
    PrefixRule("postman-api-token", ("PMAK-",), _HEX + "{24}-" + _HEX + "{34}"),
    PrefixRule("prefect-api-token", ("pnu_",), _ALNUM + "{36}"),
    PrefixRule("pulumi-api-token", ("pul-",), "[a-f0-9]{40}"),
    PrefixRule("pypi-upload-token", ("pypi-AgE",), "[A-Za-z0-9_-]{40,}"),  # ds: PypiTokenDetector
    PrefixRule("readme-api-token", ("rdme_",), "[a-z0-9]{70}"),
    PrefixRule("rubygems-api-token", ("rubygems_",), "[a-f0-9]{48}"),
    PrefixRule("scalingo-api-token", ("tk-us-",), "[A-Za-z0-9_-]{48}"),
    # gitleaks' 66 characters, detect-secrets' SendGridDetector's 22 "." 43.
    PrefixRule("sendgrid-api-token", ("SG.",), "[A-Za-z0-9=_.-]{66}"),
    PrefixRule("sendinblue-api-token", ("xkeysib-",), "[a-f0-9]{64}-" + _ALNUM + "{16}"),
    PrefixRule("sentry-user-token", ("sntryu_",), "[a-f0-9]{64}"),
    PrefixRule("sentry-org-token", ("sntrys_eyJpYXQiO",), "[A-Za-z0-9+/=_]{10,}"),
    PrefixRule("settlemint-personal-access-token", ("sm_pat_", "sm_aat_", "sm_sat_"),
               _ALNUM + "{16}"),
    PrefixRule("shippo-api-token", ("shippo_live_", "shippo_test_"), _HEX + "{40}"),
    PrefixRule("shopify-access-token", ("shpat_", "shpca_", "shppa_", "shpss_"), _HEX + "{32}"),
    # gitleaks' slack-*-token rules (xoxb, xoxp, xoxa, xoxr, xoxo, xoxs, xoxe, xoxe.xoxb-);
    # detect-secrets' SlackDetector.
    PrefixRule("slack-bot-token", ("xox",), r"[abposre](?:\.xox[bp])?-[A-Za-z0-9-]{8,}"),
    PrefixRule("slack-app-token", ("xapp-",), "[0-9]-[A-Za-z0-9-]{8,}"),
    PrefixRule("slack-webhook-url", ("hooks.slack.com/",),
               "(?:services|workflows|triggers)/[A-Za-z0-9+/]{20,}"),
    PrefixRule("sourcegraph-access-token", ("sgp_",), "(?:(?:" + _HEX + "{16}|local)_)?"
               + _HEX + "{40}"),
    PrefixRule("square-access-token", ("sq0atp-", "EAAA"), "[A-Za-z0-9_-]{22,60}"),
    PrefixRule("ds:SquareOAuthDetector", ("sq0csp-",), "[0-9A-Za-z_-]{43}"),
    PrefixRule("stripe-access-token", ("sk_", "rk_"), "(?:test|live|prod)_" + _ALNUM + "{10,}"),
    PrefixRule("twilio-api-key", ("SK",), _HEX + "{32}"),  # ds: TwilioKeyDetector
    PrefixRule("ds:TwilioKeyDetector:account", ("AC",), "[a-z0-9]{32}"),
    PrefixRule("vault-service-token", ("hvs.",), "[A-Za-z0-9_-]{90,}"),
    PrefixRule("vault-batch-token", ("hvb.",), "[A-Za-z0-9_-]{138,}"),
    PrefixRule("vault-service-token:legacy", ("s.",), _ALNUM + "{24}"),
    # A JSON Web Token: two base64url JSON objects and a signature (ds: JwtTokenDetector).
    PrefixRule("jwt", ("eyJ",), r"[A-Za-z0-9_-]{8,}\.ey[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*",
               left="A-Za-z0-9_-"),
)

CONTEXT_RULES: tuple[ContextRule, ...] = (
    # gitleaks: "A" and 34 characters after 5-16 digits; detect-secrets: 35 after 8-10. Also
    # right after "bot", as the Bot API's URLs write it (api.telegram.org/bot<token>/getMe).
    ContextRule("telegram-bot-api-token", (":",),
                r"(?:(?<![A-Za-z0-9])|(?<=bot))[0-9]{5,16}:[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])"),
    ContextRule("azure-ad-client-secret", ("Q~",),
                r"(?<![A-Za-z0-9_~.])[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}"
                r"(?![A-Za-z0-9_~.-])"),
    ContextRule("hashicorp-tf-api-token", ("atlasv1",),
                r"(?<![A-Za-z0-9])[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}"),
    ContextRule("maxmind-license-key", ("_mmk",),
                r"(?<![A-Za-z0-9])[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk(?![A-Za-z0-9])"),
    ContextRule("facebook-access-token", ("|", "%"),
                r"(?<![A-Za-z0-9])[0-9]{15,16}(?:\||%7C)[0-9A-Za-z_-]{27,40}(?![A-Za-z0-9])"),
    ContextRule("microsoft-teams-webhook", ("webhook.office.com",),
                r"(?<![A-Za-z0-9-])[A-Za-z0-9-]+\.webhook\.office\.com/webhookb2/[^\s'\"<>]+"),
    ContextRule("ds:MailchimpDetector", ("-us",),
                r"(?<![A-Za-z0-9])[0-9a-f]{32}-us[0-9]{1,2}(?![A-Za-z0-9])"),
    ContextRule("ds:DiscordBotTokenDetector", (".",),
                r"(?<![A-Za-z0-9_-])[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}"
                r"\.[A-Za-z0-9_-]{27}(?![A-Za-z0-9_-])"),
)


def prefix_pattern(rules: Sequence[PrefixRule]) -> re.Pattern[str]:
    """One expression for every prefix rule: not after a letter or a digit (checked first, so a
    position inside a word costs one test), then the alternatives grouped by first character,
    so a word's start costs one test per distinct first character, not one per rule. A rule
    whose ``left`` boundary is wider checks the rest of it right after its first character."""
    groups: dict[str, list[str]] = {}
    for rule in rules:
        extra = rule.left.replace(_LEFT, "", 1)
        for prefix in rule.prefixes:
            groups.setdefault(prefix[0], []).append(
                (f"(?<![{extra}].)" if extra else "") + re.escape(prefix[1:])
                + "(?:" + rule.rest + ")")
    return re.compile(f"(?<![{_LEFT}])(?:" + "|".join(
        re.escape(first) + "(?:" + "|".join(alternatives) + ")"
        for first, alternatives in groups.items()) + ")(?![A-Za-z0-9])")


PREFIX_SHAPES = prefix_pattern(PREFIX_RULES)
CONTEXT_SHAPES = tuple((rule, re.compile(rule.pattern)) for rule in CONTEXT_RULES)
