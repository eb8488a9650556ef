package main

import "github.com/spf13/cobra"

// environmentTopic is "reasonix help environment": every variable of SPEC
// §4 the program reads. A command without Run is a help topic for cobra.
func environmentTopic() *cobra.Command {
	return &cobra.Command{
		Use:   "environment",
		Short: "The environment variables reasonix reads",
		Long: `Environment variables:

  REASONIX_HOME            where everything lives (default ~/.reasonix): plugin-packages.json (the
                           registry), plugins/, cache/cache.db, store/, marketplaces.json,
                           serve.token and serve.addr
  REASONIX_OFFLINE=1       no network, as --offline: plan from the cache and the store only
  REASONIX_GIT=off         no git transport: GitHub sources come from archives
  REASONIX_GITHUB_URL      where github.com sources are fetched from (default https://github.com);
                           sources keep saying github.com
  REASONIX_GITHUB_API_URL  the GitHub REST API base (default https://api.github.com)
  GITHUB_TOKEN, GH_TOKEN   a token for the GitHub API and git (higher rate limits, private
                           repositories); never printed, never stored
  (other hosts)            https: asked only after the host answers 401, then, in order: git's
                           credential helpers (git credential fill, exact host and path, 10s at
                           most, never a prompt), then ~/.netrc (warned if others can read it);
                           sent only to that scheme://host:port, redirects included
  HOME, SSH_AUTH_SOCK      ssh (git@HOST:PATH, ssh://): the agent's keys, then ~/.ssh/id_ed25519,
                           id_ecdsa, id_rsa (encrypted ones skipped: ssh-add them); host keys
                           only from ~/.ssh/known_hosts (unknown or changed: refused); USER is
                           the account when the URL names none; ~/.ssh/config is not read
  REASONIX_URL_REWRITE     "FROM=TO[ FROM=TO…]": fetch any host's URLs from elsewhere, like git's
                           url.<TO>.insteadOf <FROM> (https:// and ssh:// URLs); sources keep
                           naming the real host
  REASONIX_MIRROR          URL[,URL…] of the team mirror's replicas, asked first
  REASONIX_MIRROR_TOKEN    the mirror's bearer token (reasonix mirror token create)
  REASONIX_MIRROR_ONLY=1   never go around the mirror to GitHub or the git host
  REASONIX_CHECKSUM_LOG    "<verifier key> <URL>": check every remote install, update and sync
                           against a checksum log (Go's sumdb protocol; the mirror serves one at
                           MIRROR/log): a tree whose digest is not the log's record of
                           HOST/OWNER/REPO[/PATH]@SHA, or a log whose signed tree heads fork, is a
                           SECURITY ERROR (install.digest_mismatch) and nothing is installed; a log
                           that cannot be read fails closed. Records verified once are read back
                           from the home without asking (re-plans, --offline); the last tree head
                           is kept in checksumlog/, tiles and records in cache/checksumlog/.
                           REASONIX_MIRROR_TOKEN is sent to it only on a mirror's origin
  GOMEMLIMIT               the Go runtime's soft memory limit (default 30 MiB for reasonix)
  REASONIX_CORPUS          tests only: the real-world marketplace corpus (.ci/run sets it)

Example:
  REASONIX_HOME=$(mktemp -d) reasonix plugin install ./examples --dry-run
  GITHUB_TOKEN=$(gh auth token) reasonix plugin install https://github.com/OWNER/REPO --yes
  REASONIX_OFFLINE=1 reasonix plugin update --all --dry-run`,
	}
}
