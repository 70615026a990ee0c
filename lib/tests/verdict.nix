# The verdict on a set of evaluation cases, each `{ got; want; }`: `failures`
# names every case whose result is not the expected one (empty when all
# pass), and `count` is how many cases there are.
cases:
let
  names = builtins.attrNames cases;
  failed =
    name:
    let
      c = cases.${name};
    in
    if c.got == c.want then
      [ ]
    else
      [ "${name}: got ${builtins.toJSON c.got}, want ${builtins.toJSON c.want}" ];
in
{
  failures = builtins.concatLists (map failed names);
  count = builtins.length names;
}
