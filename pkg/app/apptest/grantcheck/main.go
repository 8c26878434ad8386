// Command grantcheck reads the AWS calls that the tests of every package
// saved (apptest.Main, with APPTEST_CALLS naming the folder) and fails
// unless each action that function.Functions grants a function was made by
// it in some test: a granted action no test makes is an unused permission,
// or a path to test. make test runs it after go test ./....
//
//	grantcheck <folder>
package main

import (
	"fmt"
	"os"

	"payments/pkg/app/apptest"
	"payments/pkg/function"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: grantcheck <folder of saved calls>")
		os.Exit(2)
	}
	problems, err := apptest.CheckSaved(os.Args[1], function.Functions)
	if err != nil {
		fmt.Fprintln(os.Stderr, "grantcheck:", err)
		os.Exit(1)
	}
	if len(problems) > 0 {
		fmt.Fprintln(os.Stderr, "AWS calls of the functions (function.Functions):")
		for _, p := range problems {
			fmt.Fprintln(os.Stderr, "  "+p)
		}
		os.Exit(1)
	}
	fmt.Println("grantcheck: every granted AWS action was made by a test")
}
