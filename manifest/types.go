package manifest

// LoaderVersion names what Load makes of a tree. Callers that cache Load's
// result by tree digest key it with this; bump it whenever the same tree
// would load differently.
const LoaderVersion = 8 // 8: runtimeFetches; 2: hook commands and MCP/runtime commands masked; 3: contextFile must be a file; 4: entry manifests, LSP servers, dependencies; 5: one document model (Claude's component rules, displayName, defaultEnabled); 6: userConfig options; 7: an entry's MCP/LSP servers ignored beside a plugin.json, a path that is a skill named by its SKILL.md, a root SKILL.md a skill

// Package is what a plugin directory is and what it contributes. The item
// types carry the JSON shapes printed verbatim in plan/show/GET /plugins
// (SPEC §11 actions[]), so every credential in them is already masked.
type Package struct {
	Kind         Kind   `json:"manifestKind"`
	ManifestPath string `json:"manifestPath"`
	Name         string `json:"name"`
	// ManifestName is the name the manifest gives itself, when the package
	// is read under another (--name, or its marketplace entry's name).
	ManifestName string `json:"manifestName,omitempty"`
	// DisplayName is the name Claude Code shows (displayName), when the
	// manifest gives one; Name stays what invocations use.
	DisplayName string `json:"displayName,omitempty"`
	// DisabledByDefault: the manifest says "defaultEnabled": false, so a
	// new install is disabled until the user enables it.
	DisabledByDefault bool          `json:"disabledByDefault,omitempty"`
	Version           string        `json:"version,omitempty"`
	Description       string        `json:"description,omitempty"`
	Compatibility     Compatibility `json:"compatibility"`
	Skills            []Skill       `json:"skills"`
	Commands          []Command     `json:"commands"`
	Agents            []Agent       `json:"agents"`
	Hooks             []Hook        `json:"hooks"`
	MCPServers        []MCPServer   `json:"mcpServers"`
	LSPServers        []LSPServer   `json:"lspServers,omitempty"`
	Themes            []string      `json:"themes,omitempty"`
	Runtime           *Runtime      `json:"runtime,omitempty"`
	// RuntimeFetches is what its hooks, MCP servers, LSP servers and
	// runtime fetch when they run (SPEC §17; runtimefetch.go).
	RuntimeFetches []RuntimeFetch `json:"runtimeFetches,omitempty"`
	// Dependencies are the other plugins this one needs (Claude's
	// "dependencies", from its manifest or its marketplace entry).
	Dependencies []Dependency `json:"dependencies,omitempty"`
	// UserConfig are the options the plugin asks its user for (Claude's
	// userConfig, see userconfig.go); its MCP servers, hooks and LSP
	// servers may reference them as ${user_config.KEY}.
	UserConfig []Option `json:"userConfig,omitempty"`
	Warnings   []string `json:"warnings"`
	// ManifestSource says where the manifest came from: the plugin's own
	// file, the marketplace entry (strict: false), or both merged.
	ManifestSource string `json:"manifestSource,omitempty"`
	Blocked        bool   `json:"blocked,omitempty"`
	BlockReason    string `json:"blockReason,omitempty"`

	// configFiles are the package's JSON documents that may hold
	// credentials (manifest aside); CredentialFiles reports them for export.
	configFiles []string
	// scripts are the plugin's shell scripts its hooks and servers launch
	// (${CLAUDE_PLUGIN_ROOT}/REL → text), read for run-time fetches
	// (scriptsOf).
	scripts map[string]string
}

// Skill is one SKILL.md directory.
type Skill struct {
	Name         string   `json:"name"`
	Invocation   string   `json:"invocation"`
	Description  string   `json:"description"`
	Path         string   `json:"path"`
	AllowedTools []string `json:"allowedTools,omitempty"`
}

// Command is one prompt-template .md file (commands and native prompts).
type Command struct {
	Name         string `json:"name"`
	Invocation   string `json:"invocation"`
	Description  string `json:"description"`
	ArgumentHint string `json:"argumentHint,omitempty"`
	Path         string `json:"path"`
}

// Agent is one plugin-owned subagent profile.
type Agent struct {
	Name        string `json:"name"`
	Invocation  string `json:"invocation"`
	Description string `json:"description"`
	Path        string `json:"path"`
}

// Hook forms: how the host launches the hook.
const (
	HookExec    = "exec"    // args present: command is the executable, args literal
	HookShell   = "shell"   // command handed to a shell
	HookContext = "context" // contextFile read directly, nothing runs
)

// Hook is one lifecycle hook. Source names the file it was declared in.
type Hook struct {
	Event       string            `json:"event"`
	Matcher     string            `json:"matcher,omitempty"`
	Command     string            `json:"command,omitempty"`
	Args        []string          `json:"args,omitempty"`
	Shell       string            `json:"shell,omitempty"`
	ContextFile string            `json:"contextFile,omitempty"`
	Form        string            `json:"form"`
	Description string            `json:"description,omitempty"`
	Timeout     float64           `json:"timeout,omitempty"`
	Async       bool              `json:"async,omitempty"`
	Env         map[string]string `json:"env,omitempty"`
	Source      string            `json:"source"`
}

// MCPServer is one MCP server entry, with URL, env and headers masked.
type MCPServer struct {
	Name       string            `json:"name"`
	Transport  string            `json:"transport"`
	Command    string            `json:"command,omitempty"`
	Args       []string          `json:"args,omitempty"`
	URL        string            `json:"url,omitempty"`
	Env        map[string]string `json:"env,omitempty"`
	Headers    map[string]string `json:"headers,omitempty"`
	AutoStart  bool              `json:"autoStart"`
	ToolPrefix string            `json:"toolPrefix"`
	Source     string            `json:"source,omitempty"`
}

// Runtime is a native code extension: a full-trust sidecar process.
type Runtime struct {
	Command      string            `json:"command"`
	Args         []string          `json:"args"`
	Env          map[string]string `json:"env,omitempty"`
	Required     bool              `json:"required,omitempty"`
	Priority     int               `json:"priority,omitempty"`
	Capabilities []string          `json:"capabilities"`
	Intercepts   []string          `json:"intercepts"`
	Replaces     []string          `json:"replaces"`
	Tools        []RuntimeTool     `json:"tools"`
	FullTrust    bool              `json:"fullTrust"`
	Warning      string            `json:"warning"`
}

// RuntimeTool is a model-callable tool a runtime serves; the model sees it
// as ModelName.
type RuntimeTool struct {
	Name        string `json:"name"`
	ModelName   string `json:"modelName"`
	Description string `json:"description"`
	ReadOnly    bool   `json:"readOnly"`
}
