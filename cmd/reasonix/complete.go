package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"reasonix.io/plugind/app"
	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/marketplace"
)

// Shell completion: cobra's machinery, with the values only reasonix knows
// — installed plugins, known marketplaces, the entries of the marketplace
// documents already cached. Completion reads local state only: it never
// touches the network and never prints anything but candidates.

// completeInstalled completes the first argument with installed plugin
// names that keep (nil: all).
func (m *Main) completeInstalled(keep func(installer.Entry) bool) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		home, err := installer.DefaultHome(m.Getenv)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		reg, err := installer.LoadRegistry(home.RegistryPath())
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, e := range reg.Plugins {
			if strings.HasPrefix(e.Name, toComplete) && (keep == nil || keep(e)) && completable(e.Name) {
				out = append(out, cobra.CompletionWithDesc(e.Name, oneLine(e.Description)))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeMarketplaces completes the first argument with known marketplace
// names.
func (m *Main) completeMarketplaces(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return m.knownMarketplaces(toComplete), cobra.ShellCompDirectiveNoFileComp
}

func (m *Main) knownMarketplaces(prefix string) []cobra.Completion {
	home, err := installer.DefaultHome(m.Getenv)
	if err != nil {
		return nil
	}
	known, err := installer.LoadMarketplaces(home.MarketplacesPath())
	if err != nil {
		return nil
	}
	var out []cobra.Completion
	for _, k := range known.Marketplaces {
		if strings.HasPrefix(k.Name, prefix) && completable(k.Name) {
			out = append(out, cobra.CompletionWithDesc(k.Name, oneLine(k.Source.String())))
		}
	}
	return out
}

// completeSource completes install's SOURCE: NAME@MARKET from the cached
// documents of the known marketplaces once the word holds an "@" or names
// an entry, and files and folders (local sources) otherwise.
func (m *Main) completeSource(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	if strings.ContainsAny(toComplete, "/.~") {
		return nil, cobra.ShellCompDirectiveDefault // a path
	}
	entries := m.marketEntries(cmd.Context(), toComplete)
	if len(entries) == 0 {
		return nil, cobra.ShellCompDirectiveDefault
	}
	return entries, cobra.ShellCompDirectiveNoFileComp
}

// marketEntries are the ready entries of the known marketplaces, as
// NAME@MARKET, from what the cache holds (offline: Available never fetches).
func (m *Main) marketEntries(ctx context.Context, prefix string) []cobra.Completion {
	names := m.knownMarketplaces("")
	if len(names) == 0 {
		return nil
	}
	a, err := m.openWith(ctx, app.OpenOptions{Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil
	}
	defer a.App.Close()
	var out []cobra.Completion
	for _, k := range names {
		market, _, _ := strings.Cut(string(k), "\t")
		list, err := a.Installer.Available(ctx, market)
		if err != nil {
			continue // not cached yet: nothing to offer from it
		}
		for _, e := range list {
			if e.Status != string(marketplace.StatusReady) {
				continue
			}
			word := e.Name + "@" + market
			if strings.HasPrefix(word, prefix) && completable(word) {
				out = append(out, cobra.CompletionWithDesc(word, oneLine(e.Description)))
			}
		}
	}
	sort.Strings(out)
	return out
}

// oneLine is a completion's description: what the shell shows beside a
// word. It comes from a plugin or a marketplace, so it is escaped and
// masked like any text output (a description must not drive the terminal
// while the user presses Tab) and cut to one short row.
func oneLine(s string) string { return safeLine(s, 60) }

// completable reports whether word may be offered for insertion into the
// user's command line: only what the user could have typed safely — no
// blanks, quotes, control or escape characters, nothing the shell would
// read as syntax. Names that are not (a hostile marketplace's) are left out
// rather than escaped, since an escaped word is a different name.
func completable(word string) bool {
	return word != "" && safeText(word) == word && !strings.ContainsFunc(word, func(r rune) bool {
		return r <= ' ' || strings.ContainsRune("\\\"'`$;&|<>(){}[]*?!#~", r)
	})
}

// completionCommand replaces cobra's default one so the scripts also
// complete ./reasonix (how the README runs it) and say how to load them.
func (m *Main) completionCommand(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "Print the shell completion script",
		Long: `Print the script that makes your shell complete reasonix's commands, flags, installed plugin
names, known marketplaces and NAME@MARKET entries. Load it for this shell, or install it for
every new one. It completes both "reasonix" and "./reasonix".`,
		Example: `  source <(reasonix completion bash)
  reasonix completion zsh > "${fpath[1]}/_reasonix"
  reasonix completion fish > ~/.config/fish/completions/reasonix.fish`,
		Args:      cobra.ExactArgs(1),
		ValidArgs: []cobra.Completion{"bash", "zsh", "fish", "powershell"},
		RunE: func(cmd *cobra.Command, args []string) error {
			var buf bytes.Buffer
			var err error
			switch args[0] {
			case "bash":
				if err = root.GenBashCompletionV2(&buf, true); err == nil {
					fmt.Fprintln(&buf, "complete -o default -F __start_reasonix ./reasonix")
					// cobra's script needs bash-completion's helpers at Tab time;
					// without them Tab prints "command not found". Say so when
					// the script is loaded instead.
					fmt.Fprintln(&buf, bashCompletionCheck)
				}
			case "zsh":
				if err = root.GenZshCompletion(&buf); err == nil {
					fmt.Fprintln(&buf, "compdef _reasonix ./reasonix")
				}
			case "fish":
				err = root.GenFishCompletion(&buf, true)
			case "powershell":
				err = root.GenPowerShellCompletionWithDesc(&buf)
			default:
				return usageError(fmt.Errorf("no completion for shell %q: want bash, zsh, fish or powershell", args[0]))
			}
			if err != nil {
				return err
			}
			_, err = io.Copy(m.Stdout, &buf)
			return err
		},
	}
}

// bashCompletionCheck warns, when the bash script is loaded, that the
// bash-completion package it relies on is not.
const bashCompletionCheck = `if ! declare -F _get_comp_words_by_ref >/dev/null 2>&1; then
    echo "reasonix completion: load bash-completion first (Debian: apt install bash-completion; then source /usr/share/bash-completion/bash_completion)" >&2
fi`
