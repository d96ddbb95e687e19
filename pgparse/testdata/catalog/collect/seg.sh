# usage: seg.sh TOOL cmd...   runs cmd, appends the log slice to ${SEGDIR:-/tmp/catq/seg}/TOOL.log
tool=$1; shift
s=$(stat -c %s ${PGLOG:-/tmp/catq/log})
"$@"; rc=$?
sleep 1
e=$(stat -c %s ${PGLOG:-/tmp/catq/log})
tail -c +$((s+1)) ${PGLOG:-/tmp/catq/log} | head -c $((e-s)) >> ${SEGDIR:-/tmp/catq/seg}/$tool.log
echo "[$tool rc=$rc bytes=$((e-s))]" >&2
exit $rc
