/* fork() while another thread registers and unregisters HIPK binaries
 * through the shim (each registration creates a lazy bundle that the
 * runtime, Inputs/fork_runtime.c, reads at once: a fill in flight; each
 * unregistration releases it under the shim's lock). Every fork child
 * registers the binary once more, which reads its code object (first
 * touch), and unregisters it; a child that does not finish within 10 s is
 * killed and counted as hung. Usage: fork_during_registration <forks>.
 * Built from Inputs/hipk_host.c (its wrapper, registered once by its
 * constructor) with KPACK_NO_MAIN. */
#define KPACK_NO_MAIN
#include "hipk_host.c"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int fork_runtime_valid(void **Modules);

static atomic_int Stop;
static atomic_long Rounds;

static void *registerLoop(void *Arg) {
  (void)Arg;
  while (!atomic_load(&Stop)) {
    void **H = __hipRegisterFatBinary(&Wrapper);
    if (!fork_runtime_valid(H))
      fprintf(stderr, "parent: registration %ld got no valid code object\n",
              atomic_load(&Rounds));
    __hipUnregisterFatBinary(H);
    atomic_fetch_add(&Rounds, 1);
  }
  return NULL;
}

int main(int Argc, char **Argv) {
  const int Forks = Argc > 1 ? atoi(Argv[1]) : 100;
  pthread_t Thread;
  if (pthread_create(&Thread, NULL, registerLoop, NULL) != 0)
    return 2;
  while (atomic_load(&Rounds) < 3)
    usleep(1000);
  int Hung = 0, Failed = 0, I = 0;
  for (; I < Forks && !Hung; ++I) {
    pid_t Child = fork();
    if (Child < 0)
      return 2;
    if (Child == 0) {
      void **H = __hipRegisterFatBinary(&Wrapper);
      const int Ok = fork_runtime_valid(H);
      __hipUnregisterFatBinary(H);
      _exit(Ok ? 0 : 1);
    }
    int Status = 0;
    pid_t Done = 0;
    for (int K = 0; K < 1000 && (Done = waitpid(Child, &Status, WNOHANG)) == 0;
         ++K)
      usleep(10000);
    if (Done == 0) {
      fprintf(stderr, "child %d (pid %d) hung\n", I, (int)Child);
      kill(Child, SIGKILL);
      waitpid(Child, &Status, 0);
      ++Hung;
    } else if (!WIFEXITED(Status) || WEXITSTATUS(Status) != 0) {
      ++Failed;
    }
  }
  atomic_store(&Stop, 1);
  pthread_join(Thread, NULL);
  printf("forks %d hung %d failed %d\n", I, Hung, Failed);
  printf("registrations on the other thread: %s\n",
         atomic_load(&Rounds) >= I ? "at least one per fork" : "fewer");
  return Hung || Failed;
}
