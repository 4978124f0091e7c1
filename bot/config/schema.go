package config

// Key is one key of the policy file as the policy reference
// (docs/policy-reference.md) shows it.
type Key struct {
	// Path is the key's place in the file: dots between mapping keys, []
	// after a list whose items are mappings, <cause> for any cause name.
	Path    string
	Type    string
	Default string // "" when there is none
	Doc     string // one line
}

// Schema is every key the policy file accepts, in the order the reference
// shows them. TestSchemaMatchesParser fails when the parser accepts a key
// this list lacks, or this list names a key the parser refuses; the
// reference is generated from it (go generate ./cmd/driftfix).
var Schema = []Key{
	{"schedule", "cron", "*/15 * * * *", "when cycles run: five cron fields, or @every 15m (at least 1m), @hourly, @daily, @weekly"},
	{"jitter", "duration", "30s", "a random delay before each cycle"},
	{"fullCycleEvery", "number", "12", "every this many cycles, diagnose every stuck application again; between them, one whose state has not changed keeps its last diagnosis (1: every cycle)"},
	{"dryRun", "bool", "false", "print the pull requests and digests, write nothing (per application: policy.dryRun)"},
	{"stateFile", "path", "/var/lib/driftfix/state.db", "the SQLite state database (a cache: GitHub stays the source of truth)"},

	{"argocd", "list", "", "the Argo CD instances to scan; at least one"},
	{"argocd[].name", "string", "the server URL", "the instance's name, unique (platformRepos[].instance names it)"},
	{"argocd[].server", "URL", "", "argocd-server's URL; required; http:// only with insecurePlaintext"},
	{"argocd[].tokenFile", "path", "", "file holding the API token (read again when it changes)"},
	{"argocd[].tokenEnv", "string", "", "environment variable holding the API token (tokenFile or tokenEnv is required)"},
	{"argocd[].caFile", "path", "", "PEM CA certificates that signed argocd-server's certificate"},
	{"argocd[].insecure", "bool", "false", "TLS without verifying argocd-server's certificate"},
	{"argocd[].insecurePlaintext", "bool", "false", "allow an http:// server, which sends the token in clear text"},
	{"argocd[].kubeconfig", "path", "$KUBECONFIG, ~/.kube/config, then in-cluster", "the cluster whose HPAs, webhooks, namespaces, CRDs and argocd-cm a diagnosis reads"},
	{"argocd[].namespace", "string", "argocd", "Argo CD's namespace, where argocd-cm lives"},
	{"argocd[].shard", "pattern", "all", "only applications whose name matches (path.Match), to split one instance between bots"},
	{"argocd[].dryRunEvidence", "bool", "false", "server-side dry-run apply each differing resource's Git manifest; needs patch RBAC on those kinds"},
	{"argocd[].dryRunBudget", "number", "50", "at most this many dry-run applies per cycle"},

	{"github", "mapping", "", "where pull requests, checks and the Drift Dashboard go: a GitHub App, or a token to try driftfix out"},
	{"github.appID", "number", "", "the GitHub App's ID (with privateKeyFile)"},
	{"github.privateKeyFile", "path", "", "the App's private key (PEM)"},
	{"github.tokenFile", "path", "", "token mode: a file holding a token (not with appID)"},
	{"github.tokenEnv", "string", "", "token mode: an environment variable holding a token"},
	{"github.baseURL", "URL", "GitHub.com's", "GitHub Enterprise: https://HOST/api/v3/"},

	{"slack", "mapping", "", "where digests go; no channel, no digests"},
	{"slack.tokenFile", "path", "", "file holding a bot token with chat:write"},
	{"slack.tokenEnv", "string", "", "environment variable holding the bot token"},
	{"slack.channel", "channel", "", "the default channel: #name or a channel ID"},
	{"slack.apiURL", "URL", "Slack's", "a Slack-compatible Web API (a proxy)"},
	{"slack.people", "mapping", "", "Slack user ID to GitHub login (U012AB3CD: octocat): who may press the digest's buttons, when the login has write access to the application's repository"},
	{"slack.actors", "mapping", "", "who else may press the digest's buttons"},
	{"slack.actors.userGroups", "list of IDs", "", "Slack user group IDs (S…) whose members may press the buttons whatever their GitHub access"},

	{"policy", "mapping", "", "the global policy; overrides[].policy takes the same keys"},
	{"policy.fixes", "mapping", "driftfix's choice per cause", "which fix kinds each cause may get"},
	{"policy.fixes.<cause>", "list of fix kinds", "", "the kinds allowed for that cause, in order of preference; [] means report only; manual-change takes none"},
	{"policy.dryRun", "bool", "dryRun", "print instead of publishing, for the applications this policy covers"},
	{"policy.stuckAfter", "duration", "10m", "how long after a successful sync an OutOfSync application counts as stuck (0s: at once)"},
	{"policy.minStuckFor", "duration", "1h", "a fix's first pull request waits until its application has been OutOfSync this long (0s: no wait)"},
	{"policy.minCycles", "number", "1", "and until the fix was proposed in this many cycles"},
	{"policy.prsPerCycle", "number", "5", "pull requests opened per cycle"},
	{"policy.openPRs", "number", "20", "driftfix pull requests open at once"},
	{"policy.prsPerRepo", "number", "3", "driftfix pull requests open at once per repository"},
	{"policy.draft", "bool", "false", "open pull requests as drafts"},
	{"policy.labels", "list of strings", "[driftfix]", "labels on every pull request"},
	{"policy.reviewers", "list of strings", "", "reviewers requested on every pull request: logins, or org/team for a team"},
	{"policy.assignees", "list of strings", "", "assignees of every pull request"},
	{"policy.branchPrefix", "string", "driftfix", "the first part of every branch driftfix pushes"},
	{"policy.sensitivePaths", "list", "", "security-relevant paths added to the built-in table, never removing one: entries shaped as bot/drift/sensitive.yaml's, or the short form, a string (JSON pointer, dotted path, field name or Kind:path)"},
	{"policy.sensitivePaths[].scope", "string or list of strings", "all", "where it applies: Kind (any group), group/Kind, core/Kind, group/* (every kind of the group), pod (relative to every pod spec), custom (custom resources' fields) or all"},
	{"policy.sensitivePaths[].name", "string", "", "only the object of this name (with a scope of one kind)"},
	{"policy.sensitivePaths[].pattern", "string", "", "a JSON pointer (* any step, prefix*, a|b), a dotted path or a field name; required"},
	{"policy.sensitivePaths[].mode", "subtree or whole", "subtree", "the path and all beneath it, or the path as one item"},
	{"policy.sensitivePaths[].reason", "string", "policy", "the category users see: privilege, image, what runs, host access, identity, secret, RBAC, admission, API registration, network exposure, pod security, policy or node placement"},
	{"policy.sensitivePaths[].what", "string", "the entry as written", "what the path controls, shown with the reason"},
	{"policy.sensitivePaths[].hidden", "string", "present", "which content found only in live, inside an item a rule would hide, makes hiding it dangerous: present, never, true, false, equals:VALUE, names:FIELD, escalates-container, escalates-pod, reads-secret-env, reads-secret-envfrom, risky-mounts or risky-volume"},
	{"policy.sensitivePaths[].allow", "string", "", "only in the built-in table: a policy entry naming a fix its path still allows is refused, as an entry only adds protection"},
	{"policy.sensitivePaths[].source", "string", "the key and line", "where the path is documented as security-relevant"},
	{"policy.writers", "list", "", "the platform's own field managers: a controller with the paths it owns, or a person"},
	{"policy.writers[].manager", "string", "", "the field manager's name as in managedFields, or a glob; required; never Argo CD's own"},
	{"policy.writers[].is", "string", "", "controller or person; required"},
	{"policy.writers[].owns", "list of paths", "", "a controller's paths (/spec/replicas, or apps/Deployment:/spec/replicas): the only grant beside the catalog that hands a field to it"},
	{"policy.quietHours", "mapping", "", "a daily window in which no pull request is opened and no digest posted (held until it ends)"},
	{"policy.quietHours.from", "HH:MM", "", "start; required"},
	{"policy.quietHours.to", "HH:MM", "", "end (may be past midnight); required"},
	{"policy.quietHours.timezone", "time zone", "UTC", "an IANA time zone such as Europe/Berlin"},
	{"policy.slackChannel", "channel", "slack.channel", "the digest channel of the applications this policy covers"},
	{"policy.manualChanges", "report or adopt", "report", "adopt: a draft pull request writes a change made by hand into Git (never a security-relevant path)"},
	{"policy.dashboard", "mapping", "", "the Drift Dashboard issue of each repository"},
	{"policy.dashboard.enabled", "bool", "false", "keep a Drift Dashboard issue in the repositories of the applications this policy covers"},
	{"policy.dashboard.title", "string", "Drift Dashboard", "the issue's title (one line, at most 256 characters)"},
	{"policy.fights", "mapping", "", "when two writers taking turns at a field are told as a fight"},
	{"policy.fights.minFlips", "number", "3", "changes of hands between two writers (at least 2)"},
	{"policy.fights.maxSelfHealSyncsPerHour", "number", "6", "self-heal syncs of one revision per hour"},
	{"policy.ignoreRules", "mapping", "", "the ignore-rule inventory in the bot (global policy only)"},
	{"policy.ignoreRules.staleAfter", "days", "14d", "a rule that hid nothing this long gets a pull request removing it (at least 1d)"},
	{"policy.titleStyle", "auto, conventional or plain", "auto", "pull request titles and commit subjects: fix(app): … (conventional), driftfix(app): … (plain), or as most of the default branch's last 20 commits are (auto)"},
	{"policy.signOff", "bool", "false", "a Signed-off-by trailer (DCO) with the bot's own name and email on every commit driftfix makes"},
	{"policy.repoFile", "mapping", "", "what a repository's own .github/driftfix.yaml may decide (global policy only)"},
	{"policy.repoFile.allow", "list of keys", "all: labels, reviewers, quietHours, titleStyle, signOff, fixes, predict", "the keys a repository's file may set; [] reads no repository's file"},

	{"overrides", "list", "", "policies for some applications; later matching overrides win, key by key"},
	{"overrides[].match", "mapping", "", "which applications; required, with at least one of its keys"},
	{"overrides[].match.project", "string", "", "the Application's project"},
	{"overrides[].match.app", "pattern", "", "the Application's name (path.Match)"},
	{"overrides[].match.namespace", "pattern", "", "the Application's namespace (path.Match)"},
	{"overrides[].policy", "mapping", "", "any key of policy except ignoreRules and repoFile; sensitivePaths and writers add to the global ones"},

	{"platformRepos", "list", "", "repositories holding Applications and argocd-cm: a URL, or a mapping that says where argocd-cm is"},
	{"platformRepos[].url", "URL", "", "the repository; required"},
	{"platformRepos[].instance", "string", "the only instance", "the Argo CD instance (argocd[].name) whose argocd-cm it declares"},
	{"platformRepos[].file", "path", "", "the file declaring argocd-cm (a ConfigMap, a Kustomize patch, or Argo CD chart values)"},
	{"platformRepos[].branch", "string", "the default branch", "the branch platform pull requests go to"},
	{"platformRepos[].fleetMin", "number", "3", "applications one finding must drift before it is fixed in argocd-cm"},

	{"policyRepo", "mapping", "", "where this policy file is kept in Git, so driftfix can propose changes to it; unset: it proposes none"},
	{"policyRepo.url", "URL", "", "the repository; required"},
	{"policyRepo.file", "path", "", "the policy file's path in it; required"},
	{"policyRepo.branch", "string", "the default branch", "the branch those pull requests go to"},

	{"unlisted", "mapping", "", "when pull requests of applications Argo CD no longer lists are closed"},
	{"unlisted.closeAfterCycles", "number", "3", "cycles in a row an application must be missing"},
	{"unlisted.maxListShrink", "fraction", "0.2", "a cycle whose list shrank by more than this closes nothing"},

	{"limits", "mapping", "", "what one repository's fetch and renders may cost"},
	{"limits.repoFetchBytes", "size", "128Mi", "objects fetched for one commit"},
	{"limits.repoBytes", "size", "64Mi", "manifest bytes read from one commit"},
	{"limits.chartBytes", "size", "16Mi", "a chart's or kustomization's files together"},
	{"limits.valuesBytes", "size", "2Mi", "one values input"},
	{"limits.renderedBytes", "size", "32Mi", "what one render may produce"},
	{"limits.renderTimeout", "duration", "10s", "one render"},
	{"limits.predictPerPullRequest", "duration", "2m", "every render predicting one pull request's head together; over it, driftfix/predict is neutral and says so"},
	{"limits.predictPerCycle", "duration", "10m", "every prediction of one cycle together; pull requests not reached wait for the next cycle"},

	{"audit", "mapping", "", "what driftfix run keeps of the API server's audit events (fed by --audit-token-file or --audit-log-file; docs/audit.md)"},
	{"audit.retention", "duration", "2h", "how long a write is kept: longer than a cycle and stuckAfter together"},
	{"audit.maxRecords", "number", "100000", "at most this many writes kept; the oldest go first"},
	{"audit.maxBytes", "size", "64Mi", "at most this much memory for the kept writes, roughly; the oldest go first"},

	{"repoCredentials", "list", "", "how repositories are read that the GitHub App's token does not cover; the longest matching urlPrefix wins"},
	{"repoCredentials[].urlPrefix", "URL prefix", "", "https://host/path, ssh://user@host/path or user@host:path; never http:// or credentials in the URL"},
	{"repoCredentials[].tokenFile", "path", "", "HTTPS: a token sent as the basic-auth password"},
	{"repoCredentials[].username", "string", "x-access-token", "HTTPS: the user sent with the token (GitLab takes oauth2)"},
	{"repoCredentials[].caFile", "path", "", "HTTPS: CA certificates trusted besides the system's"},
	{"repoCredentials[].sshKeyFile", "path", "", "SSH: an unencrypted private key"},
	{"repoCredentials[].knownHostsFile", "path", "", "SSH: required with sshKeyFile; a host key not in it is refused"},
}
