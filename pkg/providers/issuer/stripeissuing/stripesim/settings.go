package stripesim

import (
	"fmt"
	"strings"
)

// Settings of a simulation from the environment (the local stack's).
const (
	// EnvStandIn sets Config.StandIn: "approve" or "decline".
	EnvStandIn = "SIM_STRIPE_STAND_IN"
	// EnvDropEvents sets Config.DropEvents: event types, comma-separated.
	EnvDropEvents = "SIM_STRIPE_DROP_EVENTS"
)

// FromEnv sets c's StandIn and DropEvents from the variables getenv gives
// (EnvStandIn, EnvDropEvents), leaving what is unset as it is, or says
// which is wrong.
func (c *Config) FromEnv(getenv func(string) string) error {
	switch v := strings.TrimSpace(getenv(EnvStandIn)); v {
	case "":
	case StandInApprove, StandInDecline:
		c.StandIn = v
	default:
		return fmt.Errorf("stripesim: %s=%q is neither %s nor %s", EnvStandIn, v, StandInApprove, StandInDecline)
	}
	for _, typ := range strings.Split(getenv(EnvDropEvents), ",") {
		typ = strings.TrimSpace(typ)
		switch {
		case typ == "":
		case typ == eventAuthorizationRequest:
			return fmt.Errorf("stripesim: %s cannot drop %s, which is asked, not delivered", EnvDropEvents, typ)
		case !strings.Contains(typ, "."):
			return fmt.Errorf("stripesim: %s: %q is no event type", EnvDropEvents, typ)
		default:
			c.DropEvents = append(c.DropEvents, typ)
		}
	}
	return nil
}
