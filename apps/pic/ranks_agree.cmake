# pic_ranks_agree: slipstream-pic on one rank and on two must give the same diagnostics.
# cmake -DPIC=slipstream-pic -DMPIEXEC=mpirun -DNUMPROC_FLAG=-n [-DEXTRA_FLAGS=...] -DWORK=dir
#       -P ranks_agree.cmake
foreach(variable PIC MPIEXEC NUMPROC_FLAG WORK)
  if(NOT DEFINED ${variable})
    message(FATAL_ERROR "ranks_agree.cmake needs -D${variable}=...")
  endif()
endforeach()

function(run_or_fail)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    list(JOIN ARGN " " command)
    message(FATAL_ERROR "failed (${status}): ${command}")
  endif()
endfunction()

set(one ${WORK}/pic_one_rank.csv)
set(two ${WORK}/pic_two_ranks.csv)
file(REMOVE ${one} ${two})
run_or_fail(${PIC} --csv ${one})
run_or_fail(${MPIEXEC} ${NUMPROC_FLAG} 2 ${EXTRA_FLAGS} ${PIC} --csv ${two})
run_or_fail(${PIC} compare ${one} ${two})
