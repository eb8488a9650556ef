package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func (m *Main) doctorCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "doctor NAME",
		Short: "Check that an installed plugin's root, manifest and content are intact",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := m.open(cmd.Context())
			if err != nil {
				return fail(m.Stderr, err)
			}
			defer a.Close()
			info, err := a.installer.Doctor(cmd.Context(), args[0])
			if err != nil {
				return fail(m.Stderr, err)
			}
			if asJSON {
				if err := writeJSON(m.Stdout, info); err != nil {
					return err
				}
			} else {
				fmt.Fprintf(m.Stdout, "%s: root %s\n", info.Name, info.Root)
				if len(info.Problems) == 0 {
					fmt.Fprintf(m.Stdout, "ok: root present, manifest readable, content matches %s\n", info.ContentDigest)
				}
				for _, p := range info.Problems {
					fmt.Fprintf(m.Stdout, "problem: %s\n", p)
				}
				for _, w := range info.Warnings {
					fmt.Fprintf(m.Stdout, "warning: %s\n", w)
				}
			}
			if len(info.Problems) > 0 {
				return errFailed
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func (m *Main) capabilitiesCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "capabilities",
		Short: "Report skills, hooks, MCP servers and package roots across installed plugins",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := m.open(cmd.Context())
			if err != nil {
				return fail(m.Stderr, err)
			}
			defer a.Close()
			r, err := a.installer.Capabilities(cmd.Context())
			if err != nil {
				return fail(m.Stderr, err)
			}
			if asJSON {
				return writeJSON(m.Stdout, r)
			}
			for _, p := range r.Plugins {
				state := "loaded"
				if !p.Loaded {
					state = "not loaded (" + p.Status + ")"
					if !p.Enabled {
						state = "disabled"
					}
				}
				fmt.Fprintf(m.Stdout, "%-24s %-20s skills=%d commands=%d agents=%d hooks=%d mcp=%d runtime=%v  %s\n",
					p.Name, state, p.Skills, p.Commands, p.Agents, p.Hooks, p.MCP, p.Runtime, p.Root)
			}
			for event, n := range r.Hooks {
				fmt.Fprintf(m.Stdout, "hook %s: %d\n", event, n)
			}
			for _, c := range r.Conflicts {
				fmt.Fprintf(m.Stdout, "conflict: %s\n", c)
			}
			for _, w := range r.Warnings {
				fmt.Fprintf(m.Stdout, "warning: %s\n", w)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
