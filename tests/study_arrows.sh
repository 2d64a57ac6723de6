#!/bin/bash
# The study module knows nothing of SIP, nor of the simulators and models it runs (the arrows of
# docs/design.md: sim -> study -> base, ini): no file of src/study, and none of its headers in
# include/osn, includes a header of sip, elem, node, sim, net, des, ctl, model, fluid or io.
# Usage: study_arrows.sh SOURCE_DIR
src=${1:?usage: study_arrows.sh SOURCE_DIR}
files=("$src"/src/study/*.[ch] "$src"/include/osn/study.h "$src"/include/osn/campaign.h
       "$src"/include/osn/study_mpi.h)
bad='^[[:space:]]*#[[:space:]]*include[[:space:]]*"(osn/)?(sip|elem|node|sim|net|des|ctl|model|fluid|json_api)[a-z_]*\.h"'
if grep -nE "$bad" "${files[@]}"; then
    echo "study_arrows: src/study includes a header it must not (above)" >&2
    exit 1
fi
echo "study_arrows: ${#files[@]} files, no include of sip/elem/node/sim/des/ctl/model/fluid/io"
