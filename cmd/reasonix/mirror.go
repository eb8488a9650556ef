package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/renameio/v2"
	"github.com/spf13/cobra"

	"reasonix.io/plugind/mirror"
	"reasonix.io/plugind/mirror/meta"
	"reasonix.io/plugind/mirror/objects"
	"reasonix.io/plugind/mirror/policy"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/server"
)

// DefaultMirrorAddr is where `reasonix mirror serve` listens by default.
const DefaultMirrorAddr = "127.0.0.1:7979"

func (m *Main) mirrorCommand() *cobra.Command {
	cmd := group(&cobra.Command{
		Use:   "mirror",
		Short: "Run a team mirror (PostgreSQL + S3-compatible storage), manage its client tokens and its checksum log key",
		Long: `The team mirror (SPEC §15) sits between an organization's machines and GitHub or any git host:
one upstream fetch per repo@SHA for everyone, an operator policy, an audit log. Clients use it
with REASONIX_MIRROR=URL[,URL…] and REASONIX_MIRROR_TOKEN.`,
		Example: `  reasonix mirror serve --postgres "$DSN" --s3-endpoint http://127.0.0.1:8333 --s3-bucket snapshots
  reasonix mirror token create --postgres "$DSN" --name laptop-ann
  reasonix mirror audit --postgres "$DSN" --outcome blocked --since 24h`,
	})
	token := group(&cobra.Command{Use: "token", Short: "Create and revoke client tokens",
		Example: `  reasonix mirror token create --postgres "$DSN" --name laptop-ann
  reasonix mirror token revoke --postgres "$DSN" --name laptop-ann`})
	token.AddCommand(m.mirrorTokenCreate(), m.mirrorTokenRevoke())
	logKey := group(&cobra.Command{Use: "log-key", Short: "Create the checksum log's signing key",
		Example: `  reasonix mirror log-key create mirror.example.com -o /etc/reasonix/log.key
  reasonix mirror serve --postgres DSN --s3-endpoint URL --s3-bucket NAME --log-key /etc/reasonix/log.key`})
	logKey.AddCommand(m.mirrorLogKeyCreate())
	cmd.AddCommand(m.mirrorServe(), token, logKey, m.mirrorAudit())
	return cmd
}

// requireFlags is a usage error naming every required flag left empty.
func requireFlags(pairs ...string) error {
	var missing []string
	for i := 0; i+1 < len(pairs); i += 2 {
		if strings.TrimSpace(pairs[i+1]) == "" {
			missing = append(missing, "--"+pairs[i])
		}
	}
	if len(missing) > 0 {
		return usageError(fmt.Errorf("missing %s", strings.Join(missing, ", ")))
	}
	return nil
}

func (m *Main) mirrorServe() *cobra.Command {
	var addr, dsn, endpoint, bucket, policyPath, replica, addrFile string
	var refTTL, negTTL, leaseTTL, wait, grace time.Duration
	var allowPrivate bool
	var logKeyPath string
	cmd := &cobra.Command{
		Use:   "serve --addr HOST:PORT --postgres DSN --s3-endpoint URL --s3-bucket NAME [--policy FILE] [--log-key FILE] [--allow-private-upstreams]",
		Short: "Serve the team mirror (run as many replicas as needed over one database and bucket)",
		Example: `  reasonix mirror serve --postgres "$DSN" --s3-endpoint http://127.0.0.1:8333 --s3-bucket snapshots
  reasonix mirror serve --addr 0.0.0.0:7979 --postgres "$DSN" --s3-endpoint "$S3" --s3-bucket snapshots --policy policy.json`,
		Long: `Serve the team mirror over HTTP. Replicas are stateless: run several over the same PostgreSQL
database and bucket, behind a load balancer or listed together in the clients' REASONIX_MIRROR.

Metadata (refs, verdicts, snapshot index, tokens, audit log) lives in PostgreSQL, whose schema
is migrated on start; snapshot archives live in the S3-compatible bucket (created if missing).
S3 credentials come from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (none: anonymous); a
database password is best given by PGPASSWORD or ~/.pgpass rather than in the DSN. Upstream is
reached as a client would: REASONIX_GITHUB_URL, REASONIX_GITHUB_API_URL, REASONIX_URL_REWRITE,
GITHUB_TOKEN.

Upstream connections go to public addresses only: a host name that resolves (at any time,
redirects and DNS rebinding included) to a loopback, private (10/8, 172.16/12, 192.168/16,
fc00::/7), link-local (169.254/16, fe80::/10) or otherwise internal address is refused, so a
marketplace cannot make the mirror reach its own network. --allow-private-upstreams lifts this
for an upstream inside the network (a private git host, a test server, an HTTPS_PROXY on a
private address).

Policy file: {"allow": [RULE…], "block": [RULE…]}, RULE = host, host/owner or host/owner/repo;
block wins; an empty allow list allows all; hosts may be written in Unicode (they are compared
in IDNA form, as sources name them). A refused source is install.blocked naming the rule.

--log-key FILE (made by reasonix mirror log-key create; every replica reads the same one) serves
the checksum log (SPEC §17) under /log with Go's checksum-database protocol: clients set
REASONIX_CHECKSUM_LOG="<verifier key> https://MIRROR/log". A record the log lacks is added by
the mirror itself, which fetches and verifies the commit as it does for a snapshot.

GET /healthz and /readyz need no token; /metrics (Prometheus), the /v1 API and /log need
Authorization: Bearer <token> (reasonix mirror token create). SIGINT or SIGTERM stops it
gracefully.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := requireFlags("postgres", dsn, "s3-endpoint", endpoint, "s3-bucket", bucket); err != nil {
				return err
			}
			if _, _, err := net.SplitHostPort(addr); err != nil {
				return usageError(fmt.Errorf("--addr %q: want HOST:PORT", addr))
			}
			level := slog.LevelInfo
			if m.verbose { // -v: every request, at debug level
				level = slog.LevelDebug
			}
			logger := server.NewLogger(m.Stderr, level)
			var pol *policy.Policy
			if policyPath != "" {
				p, err := policy.Load(policyPath)
				if err != nil {
					return fail(m.Stderr, err)
				}
				pol = p
			}
			var logKey *mirror.LogKey
			if logKeyPath != "" {
				k, err := mirror.ReadLogKey(logKeyPath)
				if err != nil {
					return fail(m.Stderr, err)
				}
				logKey = k
			}
			ctx := cmd.Context()
			srv, closeDB, err := mirror.Open(ctx, dsn, objects.Config{
				Endpoint: endpoint, Bucket: bucket,
				AccessKey: m.Getenv("AWS_ACCESS_KEY_ID"), SecretKey: m.Getenv("AWS_SECRET_ACCESS_KEY"),
				SessionToken: m.Getenv("AWS_SESSION_TOKEN"), Region: m.Getenv("AWS_REGION"),
			}, m.Getenv, allowPrivate, mirror.Config{
				Policy: pol, Log: logger, ReplicaID: replica,
				RefTTL: refTTL, NegativeTTL: negTTL, LeaseTTL: leaseTTL, WaitTimeout: wait, LogKey: logKey,
			})
			if err != nil {
				return fail(m.Stderr, err)
			}
			defer closeDB()
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fail(m.Stderr, err)
			}
			if addrFile != "" {
				if err := renameio.WriteFile(addrFile, []byte(ln.Addr().String()+"\n"), 0o644); err != nil {
					_ = ln.Close()
					return fail(m.Stderr, fmt.Errorf("--addr-file: %w", err))
				}
			}
			allow, block := pol.Rules()
			logger.Info("mirror starting", "addr", ln.Addr().String(), "replica", srv.ReplicaID(),
				"policy_allow", allow, "policy_block", block, "policy_runtime", string(pol.Runtime()), "credentials", m.Getenv("AWS_ACCESS_KEY_ID") != "",
				"private_upstreams", allowPrivate)
			if err := srv.Serve(ctx, ln, grace); err != nil {
				return fail(m.Stderr, err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", DefaultMirrorAddr, "address to listen on, HOST:PORT (port 0: any free port; see --addr-file)")
	f.StringVar(&dsn, "postgres", "", "PostgreSQL connection string (postgres://USER@HOST:PORT/DB?sslmode=…)")
	f.StringVar(&endpoint, "s3-endpoint", "", "S3-compatible endpoint, http(s)://HOST[:PORT]")
	f.StringVar(&bucket, "s3-bucket", "", "bucket for snapshot archives (created if missing)")
	f.StringVar(&policyPath, "policy", "", `policy file {"allow": [RULE…], "block": [RULE…]}`)
	f.StringVar(&replica, "replica-id", "", "this replica's name in leases and the audit log (default host/pid/random)")
	f.StringVar(&logKeyPath, "log-key", "", "serve the checksum log under /log, its heads signed with this key file (reasonix mirror log-key create)")
	f.StringVar(&addrFile, "addr-file", "", "write the address it listens on to this file once listening")
	f.DurationVar(&refTTL, "ref-ttl", mirror.DefaultRefTTL, "how long a resolved ref is served before asking upstream again (one conditional request)")
	f.DurationVar(&negTTL, "negative-ttl", mirror.DefaultNegativeTTL, "how long not-found answers are remembered")
	f.DurationVar(&leaseTTL, "lease-ttl", mirror.DefaultLeaseTTL, "lease on an upstream fetch: how long a dead replica's fetch blocks others before it is taken over")
	f.DurationVar(&wait, "wait-timeout", mirror.DefaultWaitTimeout, "how long a request waits for another replica's upstream fetch")
	f.DurationVar(&grace, "shutdown-timeout", mirror.DefaultShutdownTimeout, "on SIGINT/SIGTERM, how long in-flight requests may run")
	f.BoolVar(&allowPrivate, "allow-private-upstreams", false, "let upstream connections reach loopback, private and link-local addresses (refused by default, after DNS resolution)")
	return cmd
}

// withMeta runs do against the mirror's database, for the token and audit
// commands; a failure to open it, or one do returns, is printed (exit 1).
func (m *Main) withMeta(ctx context.Context, dsn string, do func(db *meta.DB) error) error {
	if err := requireFlags("postgres", dsn); err != nil {
		return err
	}
	db, err := meta.Open(ctx, dsn)
	if err != nil {
		return fail(m.Stderr, err)
	}
	defer db.Close()
	return do(db)
}

// tokenCommand is `mirror token create` or `revoke`: both take the
// database and a client's name.
func (m *Main) tokenCommand(c *cobra.Command, nameUsage string, do func(ctx context.Context, db *meta.DB, name string) error) *cobra.Command {
	var dsn, name string
	c.Args = cobra.NoArgs
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if err := requireFlags("postgres", dsn, "name", name); err != nil {
			return err
		}
		return m.withMeta(cmd.Context(), dsn, func(db *meta.DB) error {
			if err := do(cmd.Context(), db, name); err != nil {
				return fail(m.Stderr, err)
			}
			return nil
		})
	}
	c.Flags().StringVar(&dsn, "postgres", "", "the mirror's PostgreSQL connection string")
	c.Flags().StringVar(&name, "name", "", nameUsage)
	return c
}

func (m *Main) mirrorTokenCreate() *cobra.Command {
	var scopes []string
	var sc policy.Scopes
	c := m.tokenCommand(&cobra.Command{
		Use:   "create --postgres DSN --name NAME [--scope RULE…]",
		Short: "Create a client token (printed alone on stdout; only its hash is stored)",
		Long: `Create a client token. --scope RULE (repeatable; RULE = host, host/owner or host/owner/repo, as
in the policy file) limits what the token may fetch to the repositories its scopes cover; the
policy still applies (block wins). Without --scope the token may fetch anything the policy allows.`,
		Example: `  reasonix mirror token create --postgres "$DSN" --name laptop-ann
  reasonix mirror token create --postgres "$DSN" --name ci-acme --scope github.com/acme --scope git.example.com/tools/shared
  TOKEN=$(reasonix mirror token create --postgres "$DSN" --name ci)`,
	}, "the client's name (shown in the audit log)", func(ctx context.Context, db *meta.DB, name string) error {
		token, err := db.CreateToken(ctx, name, sc)
		if err == nil {
			fmt.Fprintln(m.Stdout, token)
		}
		return err
	})
	c.Flags().StringArrayVar(&scopes, "scope", nil, "limit the token to repositories this RULE covers (host, host/owner or host/owner/repo; repeatable)")
	// A bad RULE is a usage error, refused before the database is opened.
	c.PreRunE = func(*cobra.Command, []string) (err error) {
		if sc, err = policy.ParseScopes(scopes); err != nil {
			return usageError(fmt.Errorf("--scope: %w", err))
		}
		return nil
	}
	return c
}

func (m *Main) mirrorTokenRevoke() *cobra.Command {
	return m.tokenCommand(&cobra.Command{
		Use:     "revoke --postgres DSN --name NAME",
		Short:   "Revoke a client token",
		Example: `  reasonix mirror token revoke --postgres "$DSN" --name laptop-ann`,
	}, "the client's name", func(ctx context.Context, db *meta.DB, name string) error {
		err := db.RevokeToken(ctx, name)
		if err == nil {
			fmt.Fprintf(m.Stderr, "revoked token %q\n", name)
		}
		return err
	})
}

func (m *Main) mirrorLogKeyCreate() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "create NAME [-o FILE]",
		Short: "Create the checksum log's signing key (written to FILE, mode 0600; the verifier key printed alone on stdout)",
		Long: `Create the signing key of a checksum log named NAME (letters, digits, '.', '-', '_': the
mirror's host name is a good one). The key is written to FILE (default NAME.key in the current
folder), mode 0600, never over an existing file; give it to every replica with
reasonix mirror serve --log-key FILE. The verifier key is printed alone on stdout: clients set
REASONIX_CHECKSUM_LOG="<verifier key> https://MIRROR/log".`,
		Example: `  reasonix mirror log-key create mirror.example.com -o /etc/reasonix/log.key
  VKEY=$(reasonix mirror log-key create mirror.example.com)`,
		Args: exactArgs(1, "NAME"),
		PreRunE: func(_ *cobra.Command, args []string) error {
			if err := mirror.CheckLogKeyName(args[0]); err != nil {
				return usageError(err)
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			vkey, err := mirror.CreateLogKey(args[0], cmp.Or(out, args[0]+".key"))
			if err != nil {
				return fail(m.Stderr, err)
			}
			fmt.Fprintln(m.Stdout, vkey)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "the key file to write (default NAME.key; never replaced)")
	return cmd
}

func (m *Main) mirrorAudit() *cobra.Command {
	var dsn string
	var f meta.AuditFilter
	var since time.Duration
	cmd := &cobra.Command{
		Use:   "audit --postgres DSN [--repo R] [--action A] [--outcome O] [--client C] [--since 24h] [--json]",
		Short: "Show the mirror's audit log: who asked for what, when, and what was served",
		Example: `  reasonix mirror audit --postgres "$DSN" --since 24h
  reasonix mirror audit --postgres "$DSN" --outcome blocked --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return m.withMeta(cmd.Context(), dsn, func(db *meta.DB) error {
				if since > 0 {
					f.Since = time.Now().Add(-since)
				}
				entries, err := db.AuditLog(cmd.Context(), f)
				if err != nil {
					return fail(m.Stderr, err)
				}
				if m.asJSON {
					if entries == nil {
						entries = []meta.Entry{}
					}
					enc := json.NewEncoder(m.Stdout)
					enc.SetIndent("", "  ")
					return enc.Encode(entries)
				}
				tw := tabwriter.NewWriter(m.Stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "TIME\tCLIENT\tACTION\tREPO\tREF/SHA\tOUTCOME\tDETAIL")
				for _, e := range entries {
					what := e.Ref
					if e.SHA != "" {
						what = strings.TrimSpace(e.Ref + " " + host.Short(e.SHA))
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.At.UTC().Format(time.RFC3339), safeText(e.Client), e.Action,
						safeText(e.Repo), safeText(what), e.Outcome, safeText(cmp.Or(e.Detail, e.Digest)))
				}
				return tw.Flush()
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&dsn, "postgres", "", "the mirror's PostgreSQL connection string")
	fl.StringVar(&f.Repo, "repo", "", "only this repository (github.com/OWNER/REPO)")
	fl.StringVar(&f.Action, "action", "", "only this action (refs, resolve, reachable, snapshot, marketplace, lease.takeover, log.lookup, log.tile, log.latest)")
	fl.StringVar(&f.Outcome, "outcome", "", "only this outcome (hit, upstream, waited, appended, blocked, out_of_scope, not_found, error)")
	fl.StringVar(&f.Client, "client", "", "only this client (token name)")
	fl.DurationVar(&since, "since", 0, "only entries this recent (e.g. 24h)")
	fl.IntVar(&f.Limit, "limit", 1000, "at most this many entries")
	return cmd
}
