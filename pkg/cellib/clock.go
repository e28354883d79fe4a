package cellib

import (
	"fmt"
	"math"
	"math/big"
	"reflect"
	"sync"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/interpreter"
)

// time.now() reads the time of the reconcile that evaluates it. What it
// gives is a timestamp that moves, so that an RGD can gate on time
// (includeWhen ${time.now() > timestamp(schema.spec.openAt)}); kro-agent
// has to evaluate such an expression again when its answer changes, and
// nothing else would make it: no object changes. So the values computed
// from time.now() keep how they depend on it. Each is a straight line of
// the reconcile's time, k·now + offset (k counts how often now went into
// it: 1 for now() and now() + 1h, 0 for a difference of two, -1 for
// openAt - now()); comparing two such lines answers at the reconcile's
// time and also tells when the answer turns, which the Clock keeps, the
// earliest first, for the reconciler to come back then.
//
// Comparing, adding or subtracting durations, and string(...) are what
// such values take; the checker refuses anything else (getHours(), a field
// written with the value as it is), because its answer would change at
// times no line tells. string(...) writes the value at the reconcile's
// time, and its changes bring nobody back.

// ClockVar is the name under which an evaluation's Clock is bound in the
// activation. It is no identifier, so no expression can name it.
const ClockVar = "@clock"

// Clock is the time of one reconcile and the earliest later time at which
// an answer computed from it turns.
type Clock struct {
	now int64 // nanoseconds since the epoch

	mu   sync.Mutex
	next int64 // 0 while no answer turns later
}

// NewClock fixes the time time.now() gives at now.
func NewClock(now time.Time) *Clock {
	return &Clock{now: clampedNanos(now)}
}

// SameTime is a clock at c's time that has noted no change yet: for
// asking when one expression turns, whatever else c noted.
func (c *Clock) SameTime() *Clock {
	if c == nil {
		return NewClock(time.Now())
	}
	return &Clock{now: c.now}
}

// NextChange is the earliest time after the clock's at which a comparison
// evaluated with it gives another answer; false for none (or no clock).
func (c *Clock) NextChange() (time.Time, bool) {
	if c == nil {
		return time.Time{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.next == 0 {
		return time.Time{}, false
	}
	return time.Unix(0, c.next).UTC(), true
}

func (c *Clock) noteChange(at int64) {
	if at <= c.now {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.next == 0 || at < c.next {
		c.next = at
	}
}

var (
	// NowTimestampType and NowDurationType are the types of the values
	// computed from time.now(). They are not CEL's timestamp and duration,
	// so that the checker refuses what would lose how they depend on now.
	NowTimestampType = cel.ObjectType("timestamp_from_now", traits.AdderType, traits.SubtractorType, traits.ComparerType)
	NowDurationType  = cel.ObjectType("duration_from_now", traits.AdderType, traits.SubtractorType, traits.ComparerType, traits.NegatorType)
)

// IsNowType reports whether t is the type of a value computed from
// time.now().
func IsNowType(t *cel.Type) bool {
	return t != nil && (t.IsExactType(NowTimestampType) || t.IsExactType(NowDurationType))
}

// moving is a value computed from time.now(): k·now + offset, in
// nanoseconds, a timestamp (since the epoch) or a duration.
type moving struct {
	clock    *Clock
	k        int64
	offset   int64
	duration bool
}

// at is the value at the reconcile's time, as a big integer: k·now
// overflows int64 for |k| > 4.
func (m moving) at() *big.Int {
	v := new(big.Int).Mul(big.NewInt(m.k), big.NewInt(m.clock.now))
	return v.Add(v, big.NewInt(m.offset))
}

// instant is the value at the reconcile's time, within what int64
// nanoseconds hold.
func (m moving) instant() (int64, bool) {
	v := m.at()
	return v.Int64(), v.IsInt64()
}

// lift turns a plain timestamp or duration into a line that does not move.
func lift(v ref.Val, clock *Clock, duration bool) (moving, bool) {
	switch t := v.(type) {
	case *moving:
		return *t, t.duration == duration
	case types.Timestamp:
		return moving{clock: clock, offset: clampedNanos(t.Time)}, !duration
	case types.Duration:
		return moving{clock: clock, offset: int64(t.Duration)}, duration
	}
	return moving{}, false
}

// clampedNanos is t in nanoseconds since the epoch, held to the years
// int64 reaches (1678 to 2262): CEL's timestamps span 1 to 9999, and a
// comparison with a date past 2262 gives the same answer for centuries.
func clampedNanos(t time.Time) int64 {
	switch {
	case t.Before(time.Unix(0, math.MinInt64)):
		return math.MinInt64
	case t.After(time.Unix(0, math.MaxInt64)):
		return math.MaxInt64
	}
	return t.UnixNano()
}

// combine adds o to m (sign 1) or takes it away (sign -1); the result is
// a duration or a timestamp as the operation makes it.
func (m *moving) combine(o moving, sign int64, duration bool) ref.Val {
	if sign < 0 {
		if o.k == math.MinInt64 || o.offset == math.MinInt64 {
			return errOutOfRange
		}
		o.k, o.offset = -o.k, -o.offset
	}
	k, kOK := addInt64(m.k, o.k)
	offset, oOK := addInt64(m.offset, o.offset)
	if !kOK || !oOK {
		return errOutOfRange
	}
	return &moving{clock: m.clock, k: k, offset: offset, duration: duration}
}

var (
	errOutOfRange = types.NewErr("time.now(): the value is out of range")
	// errNoClock is time.now() in a program planned without
	// ClockDecorator, or evaluated without a Clock bound.
	errNoClock = types.NewErr("time.now() is evaluated without a clock")
)

func addInt64(a, b int64) (int64, bool) {
	s := a + b
	return s, (s > a) == (b > 0)
}

// Add: timestamp + duration, duration + timestamp, duration + duration.
func (m *moving) Add(other ref.Val) ref.Val {
	if o, ok := lift(other, m.clock, true); ok {
		return m.combine(o, 1, m.duration)
	}
	if o, ok := lift(other, m.clock, false); ok && m.duration {
		return m.combine(o, 1, false)
	}
	return types.MaybeNoSuchOverloadErr(other)
}

// Subtract: timestamp - timestamp, timestamp - duration, duration - duration.
func (m *moving) Subtract(other ref.Val) ref.Val {
	if o, ok := lift(other, m.clock, true); ok {
		return m.combine(o, -1, m.duration)
	}
	if o, ok := lift(other, m.clock, false); ok && !m.duration {
		return m.combine(o, -1, true)
	}
	return types.MaybeNoSuchOverloadErr(other)
}

// Negate: -duration.
func (m *moving) Negate() ref.Val {
	if m.k == math.MinInt64 || m.offset == math.MinInt64 {
		return errOutOfRange
	}
	return &moving{clock: m.clock, k: -m.k, offset: -m.offset, duration: m.duration}
}

// Compare answers at the reconcile's time and notes when the answer turns:
// where the two lines cross, after now.
func (m *moving) Compare(other ref.Val) ref.Val {
	o, ok := lift(other, m.clock, m.duration)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	if dk := m.k - o.k; dk != 0 {
		// k·t + offset = o.k·t + o.offset at t = (o.offset - offset) / (k - o.k);
		// a strict comparison turns just after it, so the next whole
		// nanosecond is when both kinds have turned.
		cross := new(big.Int).Sub(big.NewInt(o.offset), big.NewInt(m.offset))
		q, r := new(big.Int).QuoRem(cross, big.NewInt(dk), new(big.Int))
		q.Add(q, big.NewInt(1))
		if r.Sign() != 0 && (r.Sign() < 0) != (dk < 0) {
			q.Sub(q, big.NewInt(1)) // QuoRem truncates; the crossing is below a negative quotient
		}
		if q.IsInt64() {
			m.clock.noteChange(q.Int64())
		}
	}
	return types.Int(m.at().Cmp(o.at()))
}

// Equal: two values computed from now are equal when they are equal at
// every time.
func (m *moving) Equal(other ref.Val) ref.Val {
	o, ok := lift(other, m.clock, m.duration)
	return types.Bool(ok && o.k == m.k && o.offset == m.offset)
}

// ConvertToType gives string(...) the value at the reconcile's time,
// written as CEL writes a timestamp or a duration.
func (m *moving) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case types.TypeType:
		return m.Type().(ref.Val)
	case types.StringType:
		v, ok := m.instant()
		if !ok {
			return errOutOfRange
		}
		if m.duration {
			return types.Duration{Duration: time.Duration(v)}.ConvertToType(types.StringType)
		}
		return types.Timestamp{Time: time.Unix(0, v).UTC()}.ConvertToType(types.StringType)
	}
	return types.NewErr("type conversion error from '%s' to '%s'", m.Type().TypeName(), t.TypeName())
}

// ConvertToNative refuses: a value computed from time.now() is written
// into an object only as string(...), which says that what is written
// changes with time and that kro-agent does not come back for it.
func (m *moving) ConvertToNative(reflect.Type) (any, error) {
	return nil, errWrittenAsIs
}

var errWrittenAsIs = fmt.Errorf("a value computed from time.now() is written into an object with string(...)")

func (m *moving) Type() ref.Type {
	if m.duration {
		return NowDurationType
	}
	return NowTimestampType
}

func (m *moving) Value() any { return m }

// clockFunctions declares time.now(), the operators its values take, on
// either side, and their conversions. The operators' declarations join
// CEL's own, whose implementation calls the left operand's Compare, Add or
// Subtract; the decorator of Program turns calls with the moving value on
// the right around.
func clockFunctions() []cel.EnvOption {
	ts, dur := NowTimestampType, NowDurationType
	cts, cdur := cel.TimestampType, cel.DurationType
	var opts []cel.EnvOption
	declare := func(fn, name string, left, right, result *cel.Type) {
		id := fmt.Sprintf("now_%s_%s_%s", name, shortName(left), shortName(right))
		opts = append(opts, cel.Function(fn, cel.Overload(id, []*cel.Type{left, right}, result)))
	}
	for _, op := range []struct{ fn, name string }{{operators.Less, "lt"}, {operators.LessEquals, "le"}, {operators.Greater, "gt"}, {operators.GreaterEquals, "ge"}} {
		// Like with like, one side moving at least.
		for _, p := range [][2]*cel.Type{{ts, ts}, {ts, cts}, {cts, ts}, {dur, dur}, {dur, cdur}, {cdur, dur}} {
			declare(op.fn, op.name, p[0], p[1], cel.BoolType)
		}
	}
	// timestamp + duration, either way round, and duration + duration.
	for _, p := range [][3]*cel.Type{{ts, dur, ts}, {ts, cdur, ts}, {cts, dur, ts}, {dur, ts, ts}, {dur, cts, ts}, {cdur, ts, ts}, {dur, dur, dur}, {dur, cdur, dur}, {cdur, dur, dur}} {
		declare(operators.Add, "add", p[0], p[1], p[2])
	}
	// timestamp - timestamp, timestamp - duration, duration - duration.
	for _, p := range [][3]*cel.Type{{ts, ts, dur}, {ts, cts, dur}, {cts, ts, dur}, {ts, dur, ts}, {ts, cdur, ts}, {cts, dur, ts}, {dur, dur, dur}, {dur, cdur, dur}, {cdur, dur, dur}} {
		declare(operators.Subtract, "sub", p[0], p[1], p[2])
	}
	toString := func(v ref.Val) ref.Val { return v.ConvertToType(types.StringType) }
	same := func(v ref.Val) ref.Val { return v }
	return append(opts,
		cel.Function(operators.Negate, cel.Overload("now_negate_duration", []*cel.Type{dur}, dur)),
		cel.Function("time.now", cel.Overload(nowOverload, nil, ts,
			cel.FunctionBinding(func(...ref.Val) ref.Val { return errNoClock }))),
		cel.Function("string",
			cel.Overload("now_timestamp_to_string", []*cel.Type{ts}, cel.StringType, cel.UnaryBinding(toString)),
			cel.Overload("now_duration_to_string", []*cel.Type{dur}, cel.StringType, cel.UnaryBinding(toString))),
		cel.Function("timestamp", cel.Overload("now_timestamp_to_timestamp", []*cel.Type{ts}, ts, cel.UnaryBinding(same))),
		cel.Function("duration", cel.Overload("now_duration_to_duration", []*cel.Type{dur}, dur, cel.UnaryBinding(same))),
	)
}

const nowOverload = "time_now"

func shortName(t *cel.Type) string {
	switch {
	case t.IsExactType(NowTimestampType):
		return "nowts"
	case t.IsExactType(NowDurationType):
		return "nowdur"
	case t.IsExactType(cel.TimestampType):
		return "ts"
	}
	return "dur"
}

// CallsNow reports whether a checked expression calls time.now().
func CallsNow(ast *cel.Ast) bool {
	for _, ref := range ast.NativeRep().ReferenceMap() {
		for _, id := range ref.OverloadIDs {
			if id == nowOverload {
				return true
			}
		}
	}
	return false
}

// ClockDecorator is the program option an expression that calls
// time.now() is planned with: time.now() reads the Clock bound as
// ClockVar, and an operator whose moving operand is on the right calls it
// from that side. typeOf gives the checked type of a subexpression.
func ClockDecorator(typeOf func(id int64) *cel.Type) cel.ProgramOption {
	return cel.CustomDecoratorV2(func(i interpreter.InterpretableV2) (interpreter.InterpretableV2, error) {
		call, ok := i.(interpreter.InterpretableCall)
		if !ok {
			return i, nil
		}
		args := call.Args()
		switch {
		case call.Function() == "time.now" && len(args) == 0:
			return readClock{call}, nil
		case len(args) == 2 && !IsNowType(typeOf(args[0].ID())) && IsNowType(typeOf(args[1].ID())):
			switch call.Function() {
			case operators.Less, operators.LessEquals, operators.Greater, operators.GreaterEquals, operators.Add, operators.Subtract:
				return rightMoving{call}, nil
			}
		}
		return i, nil
	})
}

// readClock is time.now(): the clock's time, a line of slope 1.
type readClock struct{ interpreter.InterpretableCall }

func (r readClock) Exec(frame *interpreter.ExecutionFrame) ref.Val {
	v, ok := frame.ResolveName(ClockVar)
	clock, _ := v.(*Clock)
	if !ok || clock == nil {
		return errNoClock
	}
	return &moving{clock: clock, k: 1}
}

func (r readClock) Eval(vars interpreter.Activation) ref.Val {
	return r.Exec(interpreter.AsFrame(vars))
}

// rightMoving is a comparison, sum or difference of a plain value on the
// left and a moving one on the right, worked out from the right.
type rightMoving struct{ interpreter.InterpretableCall }

func (r rightMoving) Eval(vars interpreter.Activation) ref.Val {
	return r.Exec(interpreter.AsFrame(vars))
}

func (r rightMoving) Exec(frame *interpreter.ExecutionFrame) ref.Val {
	args := r.Args()
	left := args[0].Exec(frame)
	if types.IsUnknownOrError(left) {
		return left
	}
	right := args[1].Exec(frame)
	if types.IsUnknownOrError(right) {
		return right
	}
	m, ok := right.(*moving)
	if !ok {
		return types.MaybeNoSuchOverloadErr(right)
	}
	switch r.Function() {
	case operators.Add:
		return m.Add(left)
	case operators.Subtract:
		if m.duration {
			// a - d = -d + a
			return m.Negate().(traits.Adder).Add(left)
		}
		// a - t = -(t - a)
		diff := m.Subtract(left)
		if d, ok := diff.(*moving); ok {
			return d.Negate()
		}
		return diff
	}
	c, ok := m.Compare(left).(types.Int)
	if !ok {
		return types.MaybeNoSuchOverloadErr(left)
	}
	c = -c // left against right
	switch r.Function() {
	case operators.Less:
		return types.Bool(c < 0)
	case operators.LessEquals:
		return types.Bool(c <= 0)
	case operators.Greater:
		return types.Bool(c > 0)
	}
	return types.Bool(c >= 0)
}
