package meta

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// Lease is one lease, as Acquire took it or Leases lists it.
type Lease struct {
	Name, Holder string
	// Previous is the holder whose expired lease this one took over; ""
	// when the lease was free.
	Previous string
	// Expired: its holder did not renew it in time (Leases).
	Expired bool
}

// Acquire takes the lease name for holder for ttl, when it is free, has
// expired (its holder died or hung: the lease is taken over) or is already
// holder's. ok is false while another holder's lease runs.
func (d *DB) Acquire(ctx context.Context, name, holder string, ttl time.Duration) (Lease, bool, error) {
	var prev string
	ok, err := d.row(ctx, "acquire lease "+name, `INSERT INTO leases (name, holder, acquired_at, expires_at, previous_holder)
		VALUES ($1, $2, now(), now() + make_interval(secs => $3), '')
		ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, acquired_at = now(),
			expires_at = EXCLUDED.expires_at, previous_holder = leases.holder
		WHERE leases.expires_at < now() OR leases.holder = EXCLUDED.holder
		RETURNING previous_holder`, []any{name, holder, ttl.Seconds()}, &prev)
	if !ok {
		return Lease{}, false, err
	}
	if prev == holder {
		prev = ""
	}
	return Lease{Name: name, Holder: holder, Previous: prev}, true, nil
}

// Renew extends holder's lease by ttl from now; false when it is no longer
// holder's (it expired and was taken over).
func (d *DB) Renew(ctx context.Context, name, holder string, ttl time.Duration) (bool, error) {
	tag, err := d.pool.Exec(ctx, `UPDATE leases SET expires_at = now() + make_interval(secs => $3)
		WHERE name = $1 AND holder = $2`, name, holder, ttl.Seconds())
	if err != nil {
		return false, dbErr("renew lease %s: %w", name, err)
	}
	return tag.RowsAffected() == 1, nil
}

// Release gives up holder's lease (nothing when it is no longer holder's).
func (d *DB) Release(ctx context.Context, name, holder string) error {
	return d.exec(ctx, "release lease "+name, `DELETE FROM leases WHERE name = $1 AND holder = $2`, name, holder)
}

// Leases lists the current leases whose name starts with prefix.
func (d *DB) Leases(ctx context.Context, prefix string) ([]Lease, error) {
	return collect(ctx, d, "list leases", `SELECT name, holder, previous_holder, expires_at < now() FROM leases
		WHERE starts_with(name, $1) ORDER BY name`, []any{prefix}, pgx.RowToStructByPos[Lease])
}
