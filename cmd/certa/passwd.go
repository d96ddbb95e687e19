package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"certa/pgwire"
)

// runPasswd prints a users-file line for a user, with a SCRAM-SHA-256
// verifier of the password read from standard input.
func runPasswd(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("certa passwd", flag.ExitOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `usage: certa passwd USER < password

Reads a password (the first line of standard input) and prints a line for
the --users-file of 'certa node': USER:SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>.
The password itself is not stored anywhere.
`)
	}
	fs.Parse(args)
	if fs.NArg() != 1 || fs.Arg(0) == "" {
		fs.Usage()
		return errors.New("passwd takes one user name")
	}
	user := fs.Arg(0)
	if f, ok := stdin.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			fmt.Fprint(stderr, "Password (shown as typed; pipe it in to avoid that): ")
		}
	}
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("read password: %w", err)
	}
	password := strings.TrimRight(line, "\r\n")
	if password == "" {
		return errors.New("empty password")
	}
	cred, err := pgwire.NewSCRAMCredential(password)
	if err != nil {
		return err
	}
	out := user + ":" + cred.String()
	// A name the users file cannot hold (a newline in it, say) is refused
	// here rather than when the node starts.
	users, err := pgwire.ReadUsers(strings.NewReader(out))
	if _, ok := users[user]; err != nil || len(users) != 1 || !ok {
		return fmt.Errorf("user name %q cannot be written to a users file", user)
	}
	_, err = fmt.Fprintln(stdout, out)
	return err
}
