package postgres

import "testing"

func TestWithoutCapture(t *testing.T) {
	for _, c := range []struct{ plan, want string }{
		{"   ->  Seq Scan on t (actual rows=1 loops=1)", "   ->  Seq Scan on t (actual rows=1 loops=1)"},
		{" Trigger  certa_capture: time=0.030 calls=1", ""},
		{" Trigger  certa_capture on ab_a1_b2: calls=1", ""}, // a plan of several tables (partitions)
		{" Trigger audit on certa_capture: calls=1", " Trigger audit on certa_capture: calls=1"},
		{" Trigger audit: calls=1", " Trigger audit: calls=1"},
		{`     "Triggers": [
       {
         "Trigger Name": " certa_capture",
         "Relation": "t",
         "Calls": 1
       }
     ]`, `     "Triggers": [
     ]`},
		{`     "Triggers": [
       {
         "Trigger Name": "audit",
         "Calls": 1
       },
       {
         "Trigger Name": " certa_capture",
         "Calls": 1
       }
     ]`, `     "Triggers": [
       {
         "Trigger Name": "audit",
         "Calls": 1
       }
     ]`},
		{`     "Triggers": [
       {
         "Trigger Name": " certa_capture",
         "Calls": 1
       },
       {
         "Trigger Name": "zz",
         "Calls": 1
       }
     ]`, `     "Triggers": [
       {
         "Trigger Name": "zz",
         "Calls": 1
       }
     ]`},
		{`   Triggers: 
     - Trigger Name: " certa_capture"
       Relation: "t"
       Calls: 1
     - Trigger Name: "zz"
       Calls: 1`, `   Triggers: 
     - Trigger Name: "zz"
       Calls: 1`},
		{`     <Triggers>
       <Trigger>
         <Trigger-Name> certa_capture</Trigger-Name>
         <Calls>1</Calls>
       </Trigger>
     </Triggers>`, `     <Triggers>
     </Triggers>`},
	} {
		got, keep := withoutCapture([]byte(c.plan))
		if string(got) != c.want || keep != (c.want != "") {
			t.Errorf("withoutCapture(%q) = %q, %v; want %q", c.plan, got, keep, c.want)
		}
	}
}
