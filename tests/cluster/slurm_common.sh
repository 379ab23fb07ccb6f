# The slurm.conf lines every test Slurm of this project shares: munge at the test's own socket
# ($D/munge.sock), root daemons, proctrack/pgid (the tracking that only knows the tasks'
# process groups), no cgroups, no accounting; the task plugin task/none unless given
# (task/affinity: srun --cpu-bind binds each task). The caller adds the cluster's name, hosts,
# ports, paths and nodes. Sourced by the Slurm tests.
slurm_common_conf() {  # slurm_common_conf DIR [TASK_PLUGIN]
  cat <<CONF
AuthType=auth/munge
AuthInfo=socket=$1/munge.sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$1/state
SlurmctldPidFile=$1/slurmctld.pid
SlurmctldLogFile=$1/slurmctld.log
ProctrackType=proctrack/pgid
TaskPlugin=${2:-task/none}
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
KillWait=2
CONF
}
