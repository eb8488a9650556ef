package manifest

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"

	"reasonix.io/plugind/internal/jsondoc"
	"reasonix.io/plugind/internal/lazyregexp"
)

// A userConfig value, and how typed text and JSON become one.

// parseNumber reads a number as JavaScript's Number() does, as Claude
// Code's --config does: decimal with an optional fraction and exponent, or
// an unsigned 0x, 0o or 0b integer. Infinity is refused: no JSON holds it.
func parseNumber(s string) (float64, bool) {
	if m := radixNumber.FindStringSubmatch(s); m != nil {
		base := map[byte]int{'x': 16, 'o': 8, 'b': 2}[m[1][1]|0x20]
		n, err := strconv.ParseUint(m[2], base, 64)
		return float64(n), err == nil
	}
	if !decimalNumber.MatchString(s) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil && !math.IsInf(f, 0)
}

var (
	radixNumber   = lazyregexp.New(`^(0[xXoObB])([0-9A-Fa-f]+)$`)
	decimalNumber = lazyregexp.New(`^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$`)
)

// Value is a userConfig value: a string, a number, a boolean, or a list of
// strings (a string option with multiple). Only its kind's field is set
// (the constructors below are the only makers).
type Value struct {
	kind valueKind
	str  string
	num  float64
	b    bool
	list []string
}

type valueKind int

const (
	valueNone valueKind = iota
	valueString
	valueNumber
	valueBool
	valueList
)

// StringValue, NumberValue, BoolValue and ListValue make values.
func StringValue(s string) Value  { return Value{kind: valueString, str: s} }
func NumberValue(f float64) Value { return Value{kind: valueNumber, num: f} }
func BoolValue(b bool) Value      { return Value{kind: valueBool, b: b} }
func ListValue(items []string) Value {
	return Value{kind: valueList, list: append([]string{}, items...)}
}

// IsZero reports a value that was never set.
func (v Value) IsZero() bool { return v.kind == valueNone }

// Text is the value as it is substituted for ${user_config.KEY}: what
// JavaScript's String() makes of it, as in Claude Code (a list joined
// with commas).
func (v Value) Text() string {
	switch v.kind {
	case valueString:
		return v.str
	case valueNumber:
		return formatNumber(v.num)
	case valueBool:
		return strconv.FormatBool(v.b)
	case valueList:
		return strings.Join(v.list, ",")
	}
	return ""
}

// Equal reports whether two values are the same: the other kinds' fields
// are zero in both.
func (v Value) Equal(w Value) bool {
	return v.kind == w.kind && v.str == w.str && v.num == w.num && v.b == w.b && slices.Equal(v.list, w.list)
}

func (v Value) kindName() string {
	return [...]string{"nothing", "a string", "a number", "a boolean", "a list"}[v.kind]
}

// formatNumber writes a number as JavaScript's String() does for the
// values people type: integers without a fraction, no exponent below 1e21.
func formatNumber(f float64) string {
	if f == 0 {
		return "0"
	}
	if a := math.Abs(f); a >= 1e21 || a < 1e-6 {
		s := strconv.FormatFloat(f, 'e', -1, 64)
		// Go writes e+07 / e-07; JavaScript e+7 / e-7.
		mant, exp, _ := strings.Cut(s, "e")
		sign, digits := exp[:1], strings.TrimLeft(exp[1:], "0")
		return mant + "e" + sign + digits
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// MarshalJSON writes the value as the JSON it is.
func (v Value) MarshalJSON() ([]byte, error) {
	switch v.kind {
	case valueString:
		return json.Marshal(v.str)
	case valueNumber:
		return []byte(strconv.FormatFloat(v.num, 'g', -1, 64)), nil
	case valueBool:
		return json.Marshal(v.b)
	case valueList:
		return json.Marshal(v.list)
	}
	return []byte("null"), nil
}

// UnmarshalJSON reads a string, number, boolean or list of strings.
func (v *Value) UnmarshalJSON(data []byte) error {
	n, err := parseJSON("value", data)
	if err != nil {
		return err
	}
	*v, err = valueOf(n)
	return err
}

var errValueShape = errors.New("a userConfig value is a string, a number, a boolean or a list of strings")

func valueOf(n *node) (Value, error) {
	switch n.Kind {
	case jsondoc.String:
		return StringValue(n.Str), nil
	case jsondoc.Number:
		f, err := strconv.ParseFloat(n.Str, 64)
		if err != nil || math.IsInf(f, 0) {
			return Value{}, errValueShape
		}
		return NumberValue(f), nil
	case jsondoc.Bool:
		return BoolValue(n.Bool), nil
	case jsondoc.Array:
		list, ok := n.StringList()
		if !ok {
			return Value{}, errValueShape
		}
		return ListValue(list), nil
	}
	return Value{}, errValueShape
}
