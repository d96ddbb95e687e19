package sqlite

import (
	"encoding/json"
	"strconv"

	"certa/sqlerr"
)

// Privileges. certa has one role, which owns everything and grants
// nothing: the ACL columns of the catalogs (relacl, attacl, ...) are NULL,
// which PostgreSQL reads as the owner's default privileges, but for the
// schemas initdb makes usable by all (fillFixed); pg_default_acl and the
// security labels have no rows. acldefault spells the defaults out, as
// pg_dump asks for them.

// aclDefaults are the default privileges of an object type as acldefault
// names it: the grantees' privileges ("" is PUBLIC, "*" the owner), each
// granted by the owner.
var aclDefaults = map[string][][2]string{
	"c": nil, // a column: its table's
	"r": {{"*", "arwdDxt"}},
	"s": {{"*", "rwU"}},
	"d": {{"", "Tc"}, {"*", "CTc"}},
	"f": {{"", "X"}, {"*", "X"}},
	"l": {{"", "U"}, {"*", "U"}},
	"L": {{"*", "rw"}},
	"n": {{"*", "UC"}},
	"t": {{"*", "C"}},
	"F": {{"*", "U"}},
	"S": {{"*", "U"}},
	"T": {{"", "U"}, {"*", "U"}},
	"p": {{"*", "sA"}},
}

// aclDefault is acldefault(objtype, owner): the default privileges as an
// aclitem[] (a JSON array of aclitems in their text form).
func aclDefault(objtype string, owner int64) (string, error) {
	items, ok := aclDefaults[objtype]
	if !ok {
		return "", sqlerr.New(sqlerr.Internal, "unrecognized object type abbreviation: %s", objtype)
	}
	name := roleName(owner)
	acl := []string{}
	for _, it := range items {
		grantee := it[0]
		if grantee == "*" {
			grantee = name
		}
		acl = append(acl, grantee+"="+it[1]+"/"+name)
	}
	b, err := json.Marshal(acl)
	return string(b), err
}

// roleName is the name of the role of oid, as aclitem prints it: the one
// role's, else the number.
func roleName(oid int64) string {
	if oid == oidUser {
		return "certa"
	}
	return strconv.FormatInt(oid, 10)
}
