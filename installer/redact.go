package installer

import (
	"reasonix.io/plugind"
	"reasonix.io/plugind/secrets"
)

// Redacted returns a copy of r whose free-text fields (the source it
// echoes, errors, warnings) have their credentials masked with
// secrets.Mask. The CLI and the daemon print responses through it:
// a refused source may carry user:password@ or ?access_token=, and the
// error that refuses it quotes it.
func (r *Response) Redacted() *Response {
	if r == nil {
		return nil
	}
	out := *r
	out.Source = secrets.Mask(r.Source)
	out.Err = redactErr(r.Err)
	out.Warnings = redactAll(r.Warnings)
	if r.Actions != nil {
		out.Actions = make([]Action, len(r.Actions))
		for i, a := range r.Actions {
			a.Source = a.Source.Masked()
			a.Err = redactErr(a.Err)
			a.Warnings = redactAll(a.Warnings)
			out.Actions[i] = a
		}
	}
	return &out
}

func redactAll(list []string) []string {
	if list == nil {
		return nil
	}
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = secrets.Mask(s)
	}
	return out
}

// redactErr masks err's message, keeping its code and (for errors.Is) the
// error itself underneath.
func redactErr(err error) error {
	if err == nil {
		return nil
	}
	return &plugind.Error{Code: plugind.CodeOf(err), Msg: secrets.Mask(err.Error()), Err: err}
}
