package dashboard

import (
	"slices"

	"payments/pkg/identity"
)

// Permission is what a page of the dashboard needs of the session's role.
type Permission string

// The permissions.
const (
	// ReadMoney reads the wallets, their ledger and the payments.
	ReadMoney Permission = "read money"
	// ManageDevelopers manages the API keys, webhook endpoints and
	// events.
	ManageDevelopers Permission = "manage developers' settings"
	// MoveMoney makes payouts and bulk payouts.
	MoveMoney Permission = "move money"
	// Export exports the company's records.
	Export Permission = "export"
	// ManageTeam invites, changes and removes the company's users.
	ManageTeam Permission = "manage the team"
	// ManageCards freezes and unfreezes the company's cards: no money
	// moves, but a frozen card stops its holder paying.
	ManageCards Permission = "manage cards"
)

// Rules are what each role may do: the one table the server checks every
// page against (Handler.routes declares each page's need).
var Rules = map[identity.Role][]Permission{
	identity.Owner:     {ReadMoney, ManageDevelopers, MoveMoney, Export, ManageTeam, ManageCards},
	identity.Developer: {ReadMoney, ManageDevelopers},
	identity.Finance:   {ReadMoney, MoveMoney, Export, ManageCards},
	identity.Viewer:    {ReadMoney},
}

// Allowed reports whether role has permission p.
func Allowed(role identity.Role, p Permission) bool { return slices.Contains(Rules[role], p) }
