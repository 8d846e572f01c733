#!/bin/sh
# The Debian documentation the knowledge-base evaluation reads (eval/kb/conversations.yaml, `convsearch eval kb`):
# installs what is missing, does nothing when everything is there. Run as root (or through sudo).
set -eu
# the last two serve the held-out set eval/kb/heldout.yaml (2.6 MB; 13 MB + its dependency debian-edu-doc-en 18 MB);
# its debian-handbook sets are not installed here: that package is ~94 MB (every language)
# apache2-doc and kicad-doc-zh (their own line) serve the second development set eval/kb/dev2.yaml
# (the Apache httpd manual 26 MB, KiCad's Chinese manual 22 MB)
PACKAGES="postgresql-doc-15 python3.11-doc debian-reference-en debian-reference-zh-cn debian-faq-zh-cn maint-guide-zh-cn
          developers-reference debian-edu-doc-zh-cn debian-handbook
          apache2-doc kicad-doc-zh"
missing=""
for p in $PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -z "$missing" ]; then
    echo "kb-docs: all installed:$(printf ' %s' $PACKAGES)"
    exit 0
fi
# the docs live under /usr/share/doc: a minimal image may exclude that path from dpkg (path-exclude); say so
if grep -rqs "path-exclude=/usr/share/doc" /etc/dpkg/dpkg.cfg.d/ 2>/dev/null; then
    echo "kb-docs: warning: /etc/dpkg/dpkg.cfg.d excludes /usr/share/doc; the packages install without their files" >&2
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing
echo "kb-docs: installed:$missing"
