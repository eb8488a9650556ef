package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"reasonix.io/plugind/internal/parity"
)

// repairCmd is `sidebyside repair -git-dir GITDIR -out NEWGITDIR`: it
// prints the commit to serve of a fetched snapshot, writing a repaired copy
// at NEWGITDIR when the snapshot's HEAD lacks files (parity.Repair).
func repairCmd(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("repair", flag.ContinueOnError)
	gitDir := fs.String("git-dir", "", "the snapshot's git directory")
	out := fs.String("out", "", "the new bare repository to write (must not exist)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *gitDir == "" || *out == "" {
		return errors.New("repair: -git-dir and -out are required")
	}
	commit, _, _, err := parity.Repair(context.Background(), *gitDir, *out)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, commit)
	return nil
}
