// Package plugind holds the domain types shared by every part of the
// reasonix plugin-package resolver: typed error codes, plugin-name rules,
// budgets and the location-independent tree digest.
package plugind

import (
	"errors"
	"fmt"
)

// Code is a stable, machine-readable error code (SPEC §11). Clients such as
// Studio branch on it, so the strings never change.
type Code string

const (
	CodeInvalidSource     Code = "install.invalid_source"
	CodeSourceUnreadable  Code = "install.source_unreadable"
	CodeNotFound          Code = "install.not_found"
	CodeConflict          Code = "install.conflict"
	CodeBudgetExceeded    Code = "install.budget_exceeded"
	CodeUnsafeArchive     Code = "install.unsafe_archive"
	CodeDigestMismatch    Code = "install.digest_mismatch"
	CodeApprovalDenied    Code = "install.approval_denied"
	CodeNotPinnable       Code = "install.not_pinnable"
	CodePublicationFailed Code = "install.publication_failed"
	CodeOfflineMiss       Code = "install.offline_miss"
	CodeBlocked           Code = "install.blocked"
	CodeCancelled         Code = "install.cancelled"
	// CodeConfigRequired: a plugin's required userConfig option has no
	// value (and no default); CodeConfigInvalid: a value given for one
	// does not fit it, or names no option of the plan.
	CodeConfigRequired     Code = "install.config_required"
	CodeConfigInvalid      Code = "install.config_invalid"
	CodeRegistryUnreadable Code = "registry.unreadable"
)

// Error is an error carrying a Code. It wraps its cause so errors.Is keeps
// working through it.
type Error struct {
	Code Code
	Msg  string
	Err  error
}

func (e *Error) Error() string {
	// Msg, when set, already reads in full (Errorf formats the cause into
	// it); Err is kept only so errors.Is/As can see through.
	if e.Msg != "" || e.Err == nil {
		return e.Msg
	}
	return e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf builds a coded error. %w verbs in format wrap as fmt.Errorf does,
// several of them included (errors.Is then sees every one).
func Errorf(code Code, format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	cause := errors.Unwrap(err)
	if _, multi := err.(interface{ Unwrap() []error }); multi {
		cause = err
	}
	return &Error{Code: code, Msg: err.Error(), Err: cause}
}

// WithCode attaches code to err unless err already carries one.
func WithCode(code Code, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := errors.AsType[*Error](err); ok {
		return err
	}
	return &Error{Code: code, Err: err}
}

// CodeOf returns the code of the outermost coded error in err's chain, or ""
// when none carries one.
func CodeOf(err error) Code {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Code
	}
	return ""
}
