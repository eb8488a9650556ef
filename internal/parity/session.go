package parity

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// SessionCommand is the command whose first message a Session is read
// from: a Claude Code session's init message lists what it loaded, before
// the session asks the (unreachable) API anything.
const SessionCommand = "claude -p --output-format stream-json --verbose (its init message)"

// Session is what a Claude Code session loaded of one plugin, by the names
// the session gives (without the "PLUGIN:" prefix): its agents, and its
// slash commands (commands and skills together, as details lists them).
// Unlike `claude plugin details`, a session reads the command and agent
// folders with the folders below them, and names an agent by its front
// matter. A session runs plugins' hooks and MCP servers, so the harness
// records one only for the fixture, whose plugins are ours.
type Session struct {
	Agents   []string `json:"agents"`
	Commands []string `json:"commands"`
}

// ParseSession reads a session's init message (its first system/init line
// of stream-json output: hook messages may come before it) into what it
// loaded of each plugin, by plugin name: a name "PLUGIN:REST" is REST of
// PLUGIN (plugin names hold no ':').
func ParseSession(out []byte) (map[string]*Session, error) {
	type message struct {
		Type          string   `json:"type"`
		Subtype       string   `json:"subtype"`
		Agents        []string `json:"agents"`
		SlashCommands []string `json:"slash_commands"`
	}
	var init *message
	for line := range bytes.Lines(out) {
		var m message
		if err := json.Unmarshal(line, &m); err != nil {
			return nil, fmt.Errorf("session: a line is not a JSON message (%w): %q", err, OneLine(string(line)))
		}
		if m.Type == "system" && m.Subtype == "init" {
			init = &m
			break
		}
	}
	if init == nil {
		return nil, fmt.Errorf("session: no system/init message in %d bytes of output", len(out))
	}
	byPlugin := map[string]*Session{}
	of := func(name string) (*Session, string) {
		plugin, rest, ok := strings.Cut(name, ":")
		if !ok {
			return nil, "" // built in, or the user's own
		}
		s := byPlugin[plugin]
		if s == nil {
			s = &Session{Agents: []string{}, Commands: []string{}}
			byPlugin[plugin] = s
		}
		return s, rest
	}
	for _, a := range init.Agents {
		if s, rest := of(a); s != nil {
			s.Agents = append(s.Agents, rest)
		}
	}
	for _, c := range init.SlashCommands {
		if s, rest := of(c); s != nil {
			s.Commands = append(s.Commands, rest)
		}
	}
	return byPlugin, nil
}
