package samtemplate

// The template's Conditions, evaluated against its parameters, and the
// Fn::If they choose between.

import (
	"fmt"
)

// noValue is AWS::NoValue: an Fn::If branch that removes what holds it.
const noValue = "AWS::NoValue"

// Condition evaluates the template's condition name with params, which
// override the parameters' defaults (a parameter with neither is "").
// It understands Fn::Equals of strings and references to parameters,
// Fn::Not, Fn::And, Fn::Or and Condition.
func (t *Template) Condition(name string, params map[string]string) (bool, error) {
	c, ok := t.Conditions[name]
	if !ok {
		return false, fmt.Errorf("samtemplate: no condition %s", name)
	}
	return t.evaluate(c, params)
}

func (t *Template) evaluate(c any, params map[string]string) (bool, error) {
	m := asMap(c)
	if len(m) != 1 {
		return false, fmt.Errorf("samtemplate: condition %v is not one function", c)
	}
	for fn, arg := range m {
		args := asSlice(arg)
		switch fn {
		case "Condition":
			return t.Condition(asString(arg), params)
		case "Fn::Equals":
			if len(args) != 2 {
				return false, fmt.Errorf("samtemplate: Fn::Equals of %d values", len(args))
			}
			a, err := t.value(args[0], params)
			if err != nil {
				return false, err
			}
			b, err := t.value(args[1], params)
			return a == b, err
		case "Fn::Not":
			if len(args) != 1 {
				return false, fmt.Errorf("samtemplate: Fn::Not of %d conditions", len(args))
			}
			v, err := t.evaluate(args[0], params)
			return !v, err
		case "Fn::And", "Fn::Or":
			and := fn == "Fn::And"
			for _, a := range args {
				v, err := t.evaluate(a, params)
				if err != nil || v != and {
					return v, err
				}
			}
			return and, nil
		}
		return false, fmt.Errorf("samtemplate: condition function %s is not understood", fn)
	}
	return false, nil
}

// value returns a string or a parameter's value.
func (t *Template) value(v any, params map[string]string) (string, error) {
	if s, ok := v.(string); ok {
		return s, nil
	}
	name := asString(asMap(v)["Ref"])
	p, ok := t.Parameters[name]
	if !ok {
		return "", fmt.Errorf("samtemplate: %v is neither a string nor a parameter", v)
	}
	if s, ok := params[name]; ok {
		return s, nil
	}
	return asString(asMap(p)["Default"]), nil
}

// Choose returns what v is once its Fn::If are decided with params: v
// itself when it is no Fn::If, the branch the condition chooses
// otherwise, and false for AWS::NoValue (nothing).
func (t *Template) Choose(v any, params map[string]string) (any, bool, error) {
	for {
		if asString(asMap(v)["Ref"]) == noValue {
			return nil, false, nil
		}
		args := asSlice(asMap(v)["Fn::If"])
		if args == nil {
			return v, true, nil
		}
		if len(args) != 3 {
			return nil, false, fmt.Errorf("samtemplate: Fn::If of %d values", len(args))
		}
		yes, err := t.Condition(asString(args[0]), params)
		if err != nil {
			return nil, false, err
		}
		if v = args[2]; yes {
			v = args[1]
		}
	}
}
