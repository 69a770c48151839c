"""Portuguese messages: the same keys and placeholders as the English catalog (en.py)."""

from __future__ import annotations

INSTALL = ("python -m pip install --force-reinstall {torch} --index-url "
           "https://download.pytorch.org/whl/cu128 (NVIDIA; escolha a versão CUDA suportada pelo "
           "seu driver), --index-url https://download.pytorch.org/whl/rocm6.4 (AMD) ou "
           "--index-url https://download.pytorch.org/whl/xpu (Intel)")

MESSAGES = {
    # -- result codes ----------------------------------------------------------------------------
    "code.GPU_CHECK_PASSED.summary": "Produto e gradiente verificados na GPU escolhida.",
    "code.GPU_CHECK_PASSED.next_action": "Passe para uma pequena entrada da sua aplicação.",
    "code.CPU_CHECK_PASSED.summary": "Produto e gradiente verificados somente na CPU.",
    "code.CPU_CHECK_PASSED.next_action":
        "Não conclua nada sobre CUDA ou ROCm: execute sem --device cpu para verificar a GPU.",
    "notebook.next_action.cpu_passed_other":
        "Não conclua nada sobre CUDA ou ROCm: chame check() de novo com o mesmo python= e "
        'device="gpu" para verificar a GPU.',
    "notebook.next_action.cpu_passed":
        'Não conclua nada sobre CUDA ou ROCm: execute check(device="gpu") para verificar a GPU.',
    "notebook.finding.NUMPY_MISSING.next_action": "%pip install numpy",
    "notebook.restart_kernel":
        "Depois reinicie o kernel (Kernel > Restart): ele mantém os módulos que "
        "importou, um torch errado incluído.",
    "code.INTERNAL_ERROR.summary": "O próprio diagnóstico falhou (um bug na ferramenta).",
    "code.INTERNAL_ERROR.next_action": "Relate o problema informando o comando executado.",
    "code.USAGE_ERROR.summary": "Argumentos inválidos.",
    "code.USAGE_ERROR.next_action": "Leia a mensagem de uma linha e depois consulte --help.",
    "code.TORCH_MISSING.summary": "O PyTorch não está instalado neste Python.",
    "code.TORCH_MISSING.next_action":
        "Verifique qual interpretador executa o seu projeto e depois instale o PyTorch nele.",
    "code.TORCH_IMPORT_FAILED.summary": "import torch falhou.",
    "code.TORCH_IMPORT_FAILED.next_action":
        "Verifique o interpretador, o pacote PyTorch e suas dependências.",
    "code.GPU_BACKEND_ABSENT.summary":
        "Este pacote do PyTorch não declara nenhum backend de GPU: nem CUDA, nem HIP, nem XPU, "
        "nem MPS (um pacote somente para CPU).",
    "code.GPU_BACKEND_ABSENT.next_action":
        "Instale o pacote do PyTorch adequado à sua GPU (CUDA, ROCm ou XPU; num Mac, o pacote "
        "padrão tem MPS).",
    "code.GPU_UNAVAILABLE.summary": "A GPU não é utilizável neste processo.",
    "code.GPU_UNAVAILABLE.next_action":
        "Verifique a exposição da placa a este processo, o driver e as permissões.",
    "code.DEVICE_INDEX_INVALID.summary":
        "O índice do dispositivo está fora dos dispositivos visíveis.",
    "code.DEVICE_INDEX_INVALID.next_action":
        "Solicite um índice menor que o número de dispositivos visíveis.",
    "code.CHECK_FAILED.summary": "O cálculo fixo produziu um resultado incorreto.",
    "code.CHECK_FAILED.next_action":
        "Leia a etapa sinalizada antes de executar o modelo completo.",
    "code.OUT_OF_MEMORY.summary": "A alocação no dispositivo falhou: memória insuficiente.",
    "code.OUT_OF_MEMORY.next_action":
        "Leia a etapa sinalizada e os achados; se nenhum nomear uma causa, verifique o que "
        "mais ocupa memória nesse dispositivo.",
    "code.RUNTIME_ERROR.summary": "Uma operação do backend falhou.",
    "code.RUNTIME_ERROR.next_action":
        "Leia a etapa sinalizada e o erro antes de executar o modelo completo.",
    "code.TIMEOUT.summary": "A verificação foi interrompida pelo tempo limite.",
    "code.TIMEOUT.next_action":
        "Trate o controle como uma falha; examine o ambiente na etapa indicada.",
    "code.WORKER_FAILED.summary": "A verificação terminou sem um relatório utilizável.",
    "code.WORKER_FAILED.next_action":
        "Trate o controle como uma falha; examine o ambiente na etapa indicada.",
    "code.COLLECTIVE_FAILED.summary":
        "A verificação deste rank passou, mas o job não está saudável: um rank falhou ou não "
        "respondeu, ou a operação coletiva falhou, expirou ou deu uma soma errada.",
    "code.COLLECTIVE_FAILED.next_action":
        "Veja os ranks indicados no bloco distributed: verifique primeiro cada rank com falha ou "
        "ausente no seu próprio nó.",
    "code.EXTENSION_FAILED.summary":
        "Uma extensão do torch falhou na importação (ou a importação travou); o torch passou.",
    "code.EXTENSION_FAILED.next_action":
        "Veja a extensão nomeada no erro e o diagnóstico: em geral foi compilada para outro torch "
        "ou outra CUDA; instale os dois do mesmo índice, fixados juntos.",
    "code.OUTPUT_WRITE_FAILED.summary": "O relatório não foi salvo no destino solicitado.",
    "code.OUTPUT_WRITE_FAILED.next_action":
        "Use um novo nome de arquivo em uma pasta com permissão de escrita.",
    "code.STDOUT_WRITE_FAILED.summary": "O resultado não pôde ser escrito na saída padrão.",
    "code.STDOUT_WRITE_FAILED.next_action":
        "Envie a saída padrão para um terminal, um pipe ou um arquivo com espaço; guarde o "
        "relatório com --output.",
    "code.INTERRUPTED.summary":
        "Parado por um sinal: Ctrl-C (SIGINT), SIGTERM ou SIGHUP (o terminal foi fechado).",
    "code.INTERRUPTED.next_action": "Execute-a novamente quando puder.",

    # -- findings ---------------------------------------------------------------------------------
    "code.COMPARE_SAME.summary":
        "O mesmo veredito (código ou status, contratos, primeiro erro); outros fatos "
        "podem diferir, listados",
    "code.COMPARE_SAME.next_action":
        "Leia os fatos listados como alterados, se houver.",
    "code.COMPARE_CHANGED.summary":
        "O veredito mudou, mas não é uma regressão (uma falha corrigida, uma falha por "
        "outra)",
    "code.COMPARE_CHANGED.next_action":
        "Leia a primeira linha e os fatos que mudaram.",
    "code.COMPARE_REGRESSION.summary":
        "Uma regressão (algo que passava e falha, uma tentativa que não conclui mais, um "
        "contrato que falha ou sumiu), nomeada abaixo da primeira linha",
    "code.COMPARE_REGRESSION.next_action":
        "Leia as linhas de regressão, depois o primeiro erro e os contratos de B.",
    "finding.CPU_ONLY_BUILD.summary":
        "O PyTorch instalado é um pacote somente para CPU: ele não pode usar nenhuma GPU.",
    "finding.CPU_ONLY_BUILD.next_action":
        "Instale um pacote para GPU neste interpretador: " + INSTALL + ".",
    "finding.CPU_ONLY_BUILD.macos.summary":
        "O PyTorch instalado é um pacote somente para CPU: ele não pode usar a GPU deste Mac "
        "(MPS).",
    "finding.CPU_ONLY_BUILD.macos.next_action":
        "Instale o pacote padrão para macOS neste interpretador (python -m pip install "
        "--force-reinstall {torch}), que inclui o MPS, a partir de um Python arm64 nativo.",
    "finding.MPS_UNAVAILABLE.rosetta.summary":
        "Este PyTorch tem MPS, mas este Python roda como x86_64 (sob o Rosetta 2 num Mac com "
        "Apple silicon), onde o MPS não está disponível.",
    "finding.MPS_UNAVAILABLE.rosetta.next_action":
        "Instale um Python arm64 nativo (o instalador universal de python.org, um conda arm64 "
        "ou o Homebrew em /opt/homebrew) e o PyTorch nele: python -m pip install torch.",
    "finding.MPS_UNAVAILABLE.macos_too_old.summary":
        "Este PyTorch tem MPS, mas o macOS {version} é antigo demais para ele: o MPS exige o "
        "macOS 12.3 ou mais recente, o PyTorch 2.5 e posteriores o macOS 13, as versões mais "
        "recentes o macOS 14.",
    "finding.MPS_UNAVAILABLE.macos_too_old.next_action":
        "Atualize o macOS (para o 14 ou mais recente) ou instale um PyTorch mais antigo que "
        "suporte o macOS {version}.",
    "finding.MPS_UNAVAILABLE.no_device.summary":
        "Este PyTorch tem MPS, mas nenhuma GPU Metal utilizável está visível (uma máquina "
        "virtual, um executor de CI ou uma sessão remota sem acesso à GPU, ou um Mac Intel).",
    "finding.MPS_UNAVAILABLE.no_device.next_action":
        "Execute no próprio Mac com Apple silicon, fora de uma máquina virtual; verifique que "
        "python -c \"import torch; print(torch.backends.mps.is_available())\" mostra True.",
    "finding.NVIDIA_DRIVER_MISSING.summary":
        "Nenhum driver NVIDIA está acessível a partir deste processo (nenhum instalado, ou um "
        "contêiner iniciado sem o runtime de GPU).",
    "finding.NVIDIA_DRIVER_MISSING.next_action":
        "Em um host: instale o driver NVIDIA (nvidia-smi deve funcionar). Em um contêiner: "
        "inicie-o com o runtime de GPU, por exemplo docker run --gpus all (NVIDIA Container "
        "Toolkit).",
    "finding.BUILD_FOR_OTHER_VENDOR.amd.summary":
        "Este PyTorch é um pacote CUDA, para GPUs NVIDIA, mas a GPU desta máquina é AMD: o pacote "
        "não pode usá-la.",
    "finding.BUILD_FOR_OTHER_VENDOR.amd.next_action":
        "Instale um pacote ROCm para a GPU AMD: python -m pip install --force-reinstall {torch} "
        "--index-url https://download.pytorch.org/whl/rocm6.4 (escolha a versão ROCm suportada "
        "pelo seu driver).",
    "finding.BUILD_FOR_OTHER_VENDOR.nvidia.summary":
        "Este PyTorch é um pacote ROCm, para GPUs AMD, mas a GPU desta máquina é NVIDIA: o pacote "
        "não pode usá-la.",
    "finding.BUILD_FOR_OTHER_VENDOR.nvidia.next_action":
        "Instale um pacote CUDA para a GPU NVIDIA: python -m pip install --force-reinstall {torch} "
        "--index-url https://download.pytorch.org/whl/cu128 (escolha a versão CUDA suportada pelo "
        "seu driver).",
    "finding.DRIVER_TOO_OLD.summary":
        "O driver NVIDIA é antigo demais para este pacote do PyTorch (CUDA {build}).",
    "finding.DRIVER_TOO_OLD.next_action":
        "Atualize o driver (pelo menos {minimum} no Linux para CUDA {major}.x) ou instale um "
        "pacote do torch para a versão CUDA suportada pelo driver, por exemplo --index-url "
        "https://download.pytorch.org/whl/cu126.",
    "finding.DRIVER_TOO_OLD.forward_compat.summary":
        "O driver NVIDIA ({driver}) é mais antigo do que o CUDA {major}.x exige ({minimum}), mas "
        "executou este pacote CUDA {build}: um pacote de compatibilidade futura do CUDA "
        "(cuda-compat, como nos contêineres NGC) está em uso.",
    "finding.DRIVER_TOO_OLD.forward_compat.next_action":
        "Nada a corrigir nesta verificação. A compatibilidade futura só funciona em GPUs de data "
        "center (e em algumas placas RTX certificadas e placas Jetson), e só com o pacote "
        "cuda-compat correspondente ao pacote do torch; para dispensá-lo, atualize o driver para "
        "pelo menos {minimum}.",
    "finding.ARCH_NOT_IN_BUILD.summary":
        "Este pacote do PyTorch não tem código para a arquitetura desta GPU.",
    "finding.ARCH_NOT_IN_BUILD.next_action":
        "Instale um pacote que liste o sm_XY desta GPU em torch.cuda.get_arch_list() (GPUs mais "
        "recentes exigem pacotes CUDA mais recentes, por exemplo --index-url "
        "https://download.pytorch.org/whl/cu128 para Blackwell) ou compile o PyTorch com "
        "TORCH_CUDA_ARCH_LIST definido para ela.",
    "finding.ARCH_PTX_ONLY.summary":
        "Esta GPU executa o PyTorch apenas por meio de PTX compilado em tempo de execução: as "
        "primeiras chamadas são lentas.",
    "finding.ARCH_PTX_ONLY.next_action":
        "Instale um pacote com código nativo (sm_XY) para esta GPU; enquanto isso, mantenha o "
        "cache JIT (CUDA_CACHE_MAXSIZE, ~/.nv/ComputeCache) entre as execuções.",
    "finding.DEVICES_HIDDEN.summary":
        "Uma variável de visibilidade de dispositivos oculta todas as GPUs para este processo.",
    "finding.DEVICES_HIDDEN.next_action":
        "Remova-a (unset {variable}) ou liste as GPUs a usar, por exemplo {variable}=0.",
    "finding.FABRIC_MANAGER_NOT_READY.summary":
        "As GPUs não estão prontas: em sistemas NVSwitch, o Fabric Manager não está em execução "
        "(CUDA 802).",
    "finding.FABRIC_MANAGER_NOT_READY.next_action":
        "Inicie-o, na mesma versão exata do driver: sudo systemctl enable --now "
        "nvidia-fabricmanager; depois verifique systemctl status nvidia-fabricmanager.",
    "finding.DRIVER_LIBRARY_MISMATCH.summary":
        "O driver do kernel e a biblioteca do driver em espaço de usuário (libcuda) têm versões "
        "diferentes (CUDA 803).",
    "finding.DRIVER_LIBRARY_MISMATCH.next_action":
        "Reinicie a máquina após uma atualização do driver ou reinstale o driver para que ambos "
        "correspondam; em um contêiner, não inclua a libcuda na imagem (deixe o runtime de GPU "
        "montar a do host).",
    "finding.FORWARD_COMPAT_UNSUPPORTED.summary":
        "Uma biblioteca CUDA de compatibilidade futura (forward compatibility) está em uso em "
        "uma GPU que não a suporta (CUDA 804).",
    "finding.FORWARD_COMPAT_UNSUPPORTED.next_action":
        "Remova as bibliotecas cuda-compat do LD_LIBRARY_PATH (ou da imagem) ou atualize o "
        "driver para que ele suporte diretamente o CUDA deste pacote.",
    "finding.CUDA_UNKNOWN_ERROR.summary":
        "O driver CUDA relata um erro desconhecido (999), muitas vezes após uma suspensão e "
        "retomada.",
    "finding.CUDA_UNKNOWN_ERROR.next_action":
        "Recarregue o módulo de memória unificada (sudo rmmod nvidia_uvm && sudo modprobe "
        "nvidia_uvm) ou reinicie a máquina; depois execute a verificação novamente.",
    "finding.MIG_SLICE.summary":
        "Uma partição MIG está em uso: ela tem uma fração da memória e do poder de cálculo da "
        "GPU.",
    "finding.MIG_SLICE.next_action":
        "Dimensione seu trabalho para a partição, não para a placa inteira; para endereçar uma "
        "partição, use em CUDA_VISIBLE_DEVICES o UUID dela mostrado por nvidia-smi -L.",
    "finding.NUMPY_MISSING.summary":
        "O NumPy não está instalado junto com o torch: tensor.numpy() e a maior parte do "
        "carregamento de dados vão falhar.",
    "finding.NUMPY_MISSING.next_action":
        "python -m pip install numpy (com o mesmo interpretador).",
    "finding.NUMPY_ABI_MISMATCH.summary":
        "A versão do NumPy não corresponde àquela com que este torch (ou uma extensão) foi "
        "compilado.",
    "finding.NUMPY_ABI_MISMATCH.next_action":
        'python -m pip install "numpy<2" para um pacote compilado com NumPy 1.x, ou atualize o '
        "torch e a extensão para pacotes feitos para NumPy 2.",
    "finding.WARNING_AS_ERROR.summary":
        "Os filtros de avisos do interpretador transformam avisos em erros, e um {category} "
        "interrompeu a verificação: o seu programa falha da mesma forma quando iniciado assim.",
    "finding.WARNING_AS_ERROR.next_action":
        "Retire o -W error (ou PYTHONWARNINGS=error) deste programa, ou deixe passar este aviso "
        "com um filtro ignore depois dele: -W error -W ignore::{category} "
        "(PYTHONWARNINGS=error,ignore::{category}), indicando o módulo se puder.",
    "finding.TRACEMALLOC_ON.summary":
        "O tracemalloc do Python está ligado neste interpretador ({frames} quadro(s) por "
        "alocação): ele registra cada alocação, o que torna a importação do torch muitas vezes "
        "mais lenta (2,3 s viraram 27 s com 5 quadros para um build CUDA numa máquina de teste).",
    "finding.TRACEMALLOC_ON.next_action":
        "Remova PYTHONTRACEMALLOC (e tire -X tracemalloc), a menos que esteja rastreando memória "
        "de propósito; nesse caso, dê mais tempo à verificação (--timeout 120).",
    "finding.CALLER_TORCH_DIFFERS.kernel.summary":
        "Este kernel executa o torch {loaded}, importado antes da verificação, que não é o que "
        "'import torch' encontra agora: o veredito vale para o próximo início do kernel.",
    "finding.CALLER_TORCH_DIFFERS.kernel.next_action":
        "Reinicie o kernel (Kernel > Restart) e execute a verificação de novo antes de importar "
        "o torch: um kernel mantém o torch que importou primeiro.",
    "finding.CALLER_TORCH_DIFFERS.program.summary":
        "Este programa executa o torch {loaded}, importado antes da verificação, que não é o que "
        "'import torch' encontra agora: o veredito vale para o próximo início do programa.",
    "finding.CALLER_TORCH_DIFFERS.program.next_action":
        "Inicie o programa de novo: um processo mantém o torch que importou primeiro.",
    "finding.TORCH_SHADOWED.local_file.summary":
        "'import torch' carregaria {module} em vez de um pacote PyTorch instalado.",
    "finding.TORCH_SHADOWED.local_file.next_action":
        "Renomeie {module} (por exemplo um script seu para torch_demo.py) ou tire-o dessa pasta, "
        "e apague a pasta __pycache__ ao lado dele; ou rode seu programa de outra pasta.",
    "finding.TORCH_SHADOWED.local_folder.summary":
        "'import torch' carregaria a pasta {module} em vez de um pacote PyTorch instalado.",
    "finding.TORCH_SHADOWED.local_folder.next_action":
        "Renomeie a pasta {module} (ou tire-a dali), ou rode seu programa de outra pasta.",
    "finding.TORCH_SHADOWED.checkout.summary":
        "'import torch' carregaria a pasta torch/ de um checkout do código-fonte do PyTorch, não "
        "compilado aqui, em vez de um pacote PyTorch instalado.",
    "finding.TORCH_SHADOWED.checkout.next_action":
        "Rode seu programa de outra pasta (cd ..), ou compile e instale o checkout neste "
        "interpretador (python -m pip install -e . -v --no-build-isolation).",
    "finding.TORCH_SHADOWED.pythonpath_checkout.summary":
        "'import torch' carregaria a pasta torch/ de um checkout do código-fonte do PyTorch, "
        "não compilado aqui, encontrada por uma pasta do PYTHONPATH, em vez de um pacote "
        "PyTorch instalado.",
    "finding.TORCH_SHADOWED.pythonpath_checkout.next_action":
        "Tire a pasta do checkout do PYTHONPATH (unset PYTHONPATH se ele não tiver mais nada de "
        "que você precise); mudar de pasta não ajuda, o PYTHONPATH é buscado de qualquer lugar. "
        "Para usar o próprio checkout, compile e instale-o neste interpretador (python -m pip "
        "install -e . -v --no-build-isolation, dentro do checkout).",
    "finding.TORCH_SHADOWED.pythonpath.summary":
        "'import torch' carregaria {module} de uma pasta do PYTHONPATH em vez de um pacote "
        "PyTorch instalado.",
    "finding.TORCH_SHADOWED.pythonpath.next_action":
        "Tire essa pasta do PYTHONPATH (ou apague o PYTHONPATH), ou renomeie {module} nela; "
        "--show-paths mostra onde está, só no seu terminal.",
    "finding.TORCH_SHADOWED.stray.summary":
        "'import torch' carregaria {module}, uma cópia perdida, em vez de um pacote PyTorch "
        "instalado.",
    "finding.TORCH_SHADOWED.pythonpath_build.summary":
        "O torch {loaded} é carregado de uma pasta do PYTHONPATH em vez do torch {installed} "
        "deste ambiente, que ele esconde: a verificação avaliou o {loaded}.",
    "finding.TORCH_SHADOWED.pythonpath_build.next_action":
        "Tire essa pasta do PYTHONPATH (unset PYTHONPATH se ele não tiver mais nada de que você "
        "precise); o torch {installed} do ambiente passa a ser o importado. Reinstalar o torch "
        "não ajudaria: o pip altera o que está escondido. --show-paths mostra a pasta, só no seu "
        "terminal.",
    "finding.TORCH_SHADOWED.other_build.summary":
        "O torch {loaded} é carregado de uma cópia que não é o torch {installed} instalado neste "
        "ambiente, que ela esconde: a verificação avaliou o {loaded}.",
    "finding.TORCH_SHADOWED.other_build.next_action":
        "Remova ou renomeie essa cópia do torch (--show-paths mostra onde está, só no seu "
        "terminal) para que o torch {installed} instalado seja o importado; reinstalar o torch "
        "não ajudaria, pois o pip altera o que está escondido.",
    "finding.TORCH_PARTIAL_INSTALL.package_gone.summary":
        "Uma desinstalação pela metade: os metadados do torch {version} estão instalados mas o "
        "pacote sumiu, então o pip responde a uma instalação simples com \"Requirement already "
        "satisfied\".",
    "finding.TORCH_PARTIAL_INSTALL.package_gone.next_action":
        "Reinstale essa versão por cima do que restou, com este interpretador: {reinstall}.",
    "finding.TORCH_PARTIAL_INSTALL.metadata_gone.summary":
        "O torch {version} está neste ambiente sem os seus metadados (uma desinstalação pela "
        "metade, ou um pacote copiado): o pip não o vê e pode instalar outra cópia por cima.",
    "finding.TORCH_PARTIAL_INSTALL.metadata_gone.next_action":
        "Reinstale essa versão, com este interpretador, para que o pip a conheça: {reinstall}.",
    "finding.TORCH_PARTIAL_INSTALL.damaged.summary":
        "O torch {version} instalado está danificado: 'import torch' roda os próprios arquivos "
        "dele, que não dão torch.__version__ (um arquivo esvaziado ou truncado); é uma "
        "instalação do PyTorch, quebrada.",
    "finding.TORCH_PARTIAL_INSTALL.damaged.next_action":
        "Reinstale essa versão por cima, com este interpretador: {reinstall}.",
    "finding.TORCH_PARTIAL_INSTALL.library_damaged.summary":
        "O torch {version} instalado está danificado: {files} (uma biblioteca compilada "
        "cortada ou sobrescrita, por uma cópia ou um download interrompido, ou um disco "
        "cheio); carregá-la mata o 'import torch' ou o faz falhar.",
    "finding.TORCH_PARTIAL_INSTALL.library_damaged.next_action":
        "Reinstale essa versão por cima, com este interpretador: {reinstall}.",
    "finding.LOCAL_MODULE_SHADOWS.breaks_import.summary":
        "import torch falhou em {module}: o seu próprio {file}, que o Python importa primeiro, "
        "no lugar do {module} de que o torch precisa (módulos seus que escondem outros: "
        "{names}).",
    "finding.LOCAL_MODULE_SHADOWS.breaks_import.next_action":
        "Renomeie {file} (e apague a pasta __pycache__ ao lado dele), depois rode a "
        "verificação de novo: o torch então importa o próprio {module}.",
    "finding.SHM_TOO_SMALL.absent.summary":
        "Não há pasta de memória compartilhada /dev/shm: os workers do DataLoader "
        "(num_workers > 0), o torch.multiprocessing e o NCCL não conseguem compartilhar memória "
        "entre processos.",
    "finding.SHM_TOO_SMALL.absent.next_action":
        "Monte uma, como root: mkdir -p /dev/shm && mount -t tmpfs -o size=8g tmpfs /dev/shm "
        "(um contêiner: docker run --ipc=host ou --shm-size=8g; Kubernetes: um emptyDir em "
        "memória em /dev/shm).",
    "finding.TORCH_BACKEND_PLUGIN_FAILED.summary":
        "import torch falhou no plugin de dispositivo {plugin}, que o torch carrega ao ser "
        "importado (grupo de pontos de entrada torch.backends): {cause}.",
    "finding.TORCH_BACKEND_PLUGIN_FAILED.next_action":
        "Dê ao plugin o que ele precisa (o runtime do dispositivo dele, acima), ou, se você não "
        "usa esse dispositivo, remova-o (python -m pip uninstall {distribution}); "
        "TORCH_DEVICE_BACKEND_AUTOLOAD=0 python app.py confirma que o torch funciona sem ele.",
    "finding.PYTHONHOME_SET.summary":
        "PYTHONHOME está definido: o interpretador verificado procura a sua biblioteca padrão "
        "nessa pasta, não encontra lá a sua e não consegue arrancar. O seu valor não é mostrado "
        "aqui.",
    "finding.PYTHONHOME_SET.next_action":
        "Remova-o (env -u PYTHONHOME python app.py, ou unset PYTHONHOME no shell, no script do "
        "job ou no módulo que o define) e volte a correr a verificação: o Python de um venv nunca"
        " precisa dele.",
    "finding.TORCH_LOGS_INVALID.summary":
        "TORCH_LOGS contém um nome que o torch não conhece (um erro de digitação, ou um de "
        "outra versão): o import torch o recusa. O valor dela não é mostrado aqui.",
    "finding.TORCH_LOGS_INVALID.next_action":
        "Remova-a (env -u TORCH_LOGS python app.py), ou corrija-a: TORCH_LOGS=help python -c "
        "'import torch' lista os nomes que este torch aceita (dynamo, inductor, "
        "graph_breaks...).",
    "finding.TORCH_ON_NOEXEC_MOUNT.summary":
        "O torch está instalado num sistema de arquivos montado com noexec: o carregador não "
        "pode mapear as bibliotecas dele dali, então o import torch falha, mesmo íntegras.",
    "finding.TORCH_ON_NOEXEC_MOUNT.next_action":
        "Coloque o ambiente num sistema de arquivos que permita execução (uma pasta pessoal ou "
        "de projeto, não um /tmp ou scratch noexec), ou peça que seja remontado com exec (como "
        "root: mount -o remount,exec nesse ponto de montagem); findmnt -T na pasta do torch "
        "mostra a montagem.",
    "finding.TORCH_FILES_UNREADABLE.summary":
        "O import torch não consegue ler {file}, um arquivo do torch instalado: permissão negada "
        "a este usuário (instalado por outro usuário com um umask fechado, ou o modo dele "
        "mudado).",
    "finding.TORCH_FILES_UNREADABLE.next_action":
        "Peça ao dono da instalação (ou ao root) que o abra a todos, com o python deste "
        "ambiente: chmod -R a+rX {folder}.",
    "finding.TORCH_PATH_NOT_UTF8.summary":
        "O caminho da pasta onde o torch está instalado não é UTF-8 (uma pasta nomeada em outra "
        "codificação): o torch o codifica em UTF-8 ao ser importado, e falha.",
    "finding.TORCH_PATH_NOT_UTF8.next_action":
        "Renomeie essa pasta com um nome UTF-8 (convmv -f latin1 -t utf8 converte tais nomes), "
        "ou crie o ambiente de novo sob um caminho UTF-8.",
    "finding.TORCH_FOR_OTHER_PYTHON.other_tag.summary":
        "A parte compilada do torch foi feita para outro Python ({built}), não para este "
        "interpretador ({own}): foi instalada com o pip de outro Python.",
    "finding.TORCH_FOR_OTHER_PYTHON.other_tag.next_action":
        "Reinstale o torch com o pip deste interpretador (o Python que roda o seu projeto): "
        "{reinstall}.",
    "finding.TORCH_FOR_OTHER_PYTHON.no_extension.summary":
        "O torch não tem parte compilada para este interpretador ({own}): falta torch/_C, e a "
        "mensagem dele sobre um checkout do código-fonte engana.",
    "finding.TORCH_FOR_OTHER_PYTHON.no_extension.next_action":
        "Reinstale o torch com o pip deste interpretador (o Python que roda o seu projeto): "
        "{reinstall}.",
    "finding.TORCH_FOR_OTHER_PYTHON.pythonpath.summary":
        "O torch vem de uma pasta do PYTHONPATH e sua parte compilada não foi feita para este "
        "interpretador ({own}; torch/_C lá: {built}): essa pasta guarda os pacotes de outro "
        "Python.",
    "finding.TORCH_FOR_OTHER_PYTHON.pythonpath.next_action":
        "Tire essa pasta do PYTHONPATH (unset PYTHONPATH se ele não tiver mais nada de que você "
        "precise; um 'module load' costuma defini-lo): este interpretador passa a importar o "
        "próprio torch, ou diz que não tem nenhum. Reinstalar o torch não ajudaria: o pip "
        "instala neste ambiente, que o PYTHONPATH precede.",
    "finding.WORKING_FOLDER_MISSING.summary":
        "A pasta em que a verificação foi iniciada não existe mais (foi removida ou renomeada): "
        "o carregador do torch falha por causa dela, seja o que for que esteja instalado.",
    "finding.WORKING_FOLDER_MISSING.next_action":
        "Vá para uma pasta que exista (cd ~, ou cd de volta ao seu projeto) e rode de novo o seu "
        "programa e a verificação; nada precisa ser reinstalado.",
    "finding.TORCH_SHADOWED.stray.next_action":
        "Remova {module} perdido (--show-paths mostra onde está, só no seu terminal), depois "
        "reinstale o PyTorch: {reinstall}.",
    "finding.LOCAL_MODULE_SHADOWS.summary":
        "Módulos nas pastas onde seu programa procura primeiro (a pasta de trabalho e a do "
        "script que chamou a verificação) escondem módulos de que ele precisa: {names}.",
    "finding.LOCAL_MODULE_SHADOWS.next_action":
        "Renomeie-os (e apague a pasta __pycache__ ao lado deles): seu programa importa esses no "
        "lugar dos da biblioteca padrão ou dos do próprio torch.",
    "finding.LOCAL_MODULE_SHADOWS.working_folder.summary":
        "Módulos na pasta de trabalho, onde um programa iniciado aqui procura primeiro, escondem "
        "módulos de que ele precisa: {names}.",
    "finding.LOCAL_MODULE_SHADOWS.working_folder.next_action":
        "Renomeie-os (e apague a pasta __pycache__ ao lado deles), ou rode seu programa de outra "
        "pasta: python app.py ali importa esses no lugar dos da biblioteca padrão ou dos do "
        "próprio torch.",
    "finding.LOCAL_MODULE_SHADOWS.script_folder.summary":
        "Módulos na pasta do script que chamou a verificação, onde o Python procura primeiro "
        "para esse script, escondem módulos de que ele precisa: {names}.",
    "finding.LOCAL_MODULE_SHADOWS.script_folder.next_action":
        "Renomeie-os (e apague a pasta __pycache__ ao lado deles), ou mova seu script para uma "
        "pasta só dele: o Python os importa para ele, de onde quer que seja rodado, no lugar dos "
        "da biblioteca padrão ou dos do próprio torch.",
    "finding.PYTHONPATH_MODULE_BREAKS_IMPORT.summary":
        "import torch falhou em {module}, carregado de uma pasta do PYTHONPATH: o Python a "
        "procura antes dos pacotes deste ambiente, então essa cópia substituiu a instalada com o "
        "torch.",
    "finding.PYTHONPATH_MODULE_BREAKS_IMPORT.next_action":
        "Rode a verificação de novo sem ele (env -u PYTHONPATH, ou python -E); se passar, tire "
        "essa pasta do PYTHONPATH (o 'module load' de um sistema de módulos ou um perfil do "
        "shell costuma apontá-lo para os pacotes de outro Python).",
    "finding.TORCH_DUPLICATE_INSTALL.summary":
        "Mais de uma instalação do PyTorch está visível para este interpretador; a que é "
        "importada pode não ser a que você instalou.",
    "finding.TORCH_DUPLICATE_INSTALL.next_action":
        "Execute python -m pip uninstall torch até o pip dizer que o torch não está instalado "
        "(cada execução remove a primeira instalação no caminho, inclusive a do site-packages do "
        "usuário; uma cópia que o pip não toca, no PYTHONPATH por exemplo, sai ao tirar a pasta "
        "dela do caminho), depois instale um único pacote.",
    "finding.TORCH_HIDDEN_BY_SETTING.no_site.summary":
        "O torch está instalado no site-packages deste interpretador, mas python -S tira essa "
        "pasta do caminho de importação: o pip, rodado sem -S, diz que o torch está instalado.",
    "finding.TORCH_HIDDEN_BY_SETTING.no_site.next_action":
        "Rode o Python sem -S (tire-o do comando ou da linha #! do script); reinstalar o torch "
        "não ajudaria.",
    "finding.TORCH_HIDDEN_BY_SETTING.user_site_variable.summary":
        "O torch está instalado no seu site-packages de usuário (pip install --user), mas "
        "PYTHONNOUSERSITE tira essa pasta do caminho de importação (o pip, rodado com ele, "
        "também não a vê e instalaria uma segunda cópia).",
    "finding.TORCH_HIDDEN_BY_SETTING.user_site_variable.next_action":
        "unset PYTHONNOUSERSITE (ou remova-o de onde é definido: script do job, arquivo de "
        "módulo, perfil do shell); reinstalar o torch não ajudaria.",
    "finding.TORCH_HIDDEN_BY_SETTING.user_site_flag.summary":
        "O torch está instalado no seu site-packages de usuário (pip install --user), mas "
        "python {setting} tira essa pasta do caminho de importação: o pip diz que o torch está "
        "instalado.",
    "finding.TORCH_HIDDEN_BY_SETTING.user_site_flag.next_action":
        "Rode o Python sem {setting} (tire-o do comando ou da linha #! do script), ou instale o "
        "torch onde este interpretador procura (um ambiente virtual); reinstalá-lo como está "
        "não ajudaria.",
    "finding.TORCH_ORPHAN_METADATA.summary":
        "A pasta {orphan} ao lado do torch são os metadados de uma instalação cujos arquivos "
        "sumiram (uma atualização interrompida): o pip a conta como torch e não consegue "
        "removê-la (\"No files were found to uninstall\", a cada vez).",
    "finding.TORCH_ORPHAN_METADATA.next_action":
        "Remova essa pasta com o Python do seu projeto: rm -r \"$(python -c 'import os, torch; "
        "print(os.path.dirname(os.path.dirname(torch.__file__)))')/{orphan}\" (no Windows, "
        "apague a pasta {orphan} ao lado da pasta torch); o torch instalado não é tocado.",
    "finding.SHARED_LIBRARY_MISSING.driver.summary":
        "import torch precisa de {library}, uma biblioteca do driver NVIDIA, que não foi "
        "encontrada.",
    "finding.SHARED_LIBRARY_MISSING.driver.next_action":
        "{library} vem com o driver NVIDIA, nunca com um pacote Python (reinstalar o torch não a "
        "traz de volta): em um host, instale o driver (nvidia-smi deve funcionar); em um "
        "contêiner, inicie-o com o runtime de GPU (docker run --gpus all, NVIDIA Container "
        "Toolkit), que monta as bibliotecas do driver do host.",
    "finding.SHARED_LIBRARY_MISSING.cuda.summary":
        "import torch precisa de {library}, que não foi encontrada.",
    "finding.SHARED_LIBRARY_MISSING.cuda.next_action":
        "Restaure {library}: ela vem com os wheels nvidia-* dos quais o torch depende: "
        "{reinstall}. Verifique também se LD_LIBRARY_PATH não aponta "
        "para outro lugar.",
    "finding.SHARED_LIBRARY_MISSING.system.summary":
        "import torch precisa de {library}, que não foi encontrada.",
    "finding.SHARED_LIBRARY_MISSING.system.next_action":
        "Restaure {library}: reinstale o torch ({reinstall}); "
        "se a biblioteca pertencer ao sistema, instale-a com o gerenciador de pacotes do "
        "sistema. Verifique também se LD_LIBRARY_PATH não aponta para outro lugar.",
    "finding.UNDEFINED_SYMBOL.summary":
        "{library} não corresponde ao código que a carrega (símbolo indefinido {symbol}): dois "
        "pacotes diferentes estão misturados.",
    "finding.UNDEFINED_SYMBOL.next_action":
        "Remova a variável LD_LIBRARY_PATH (ela costuma apontar para outro CUDA ou cuDNN), "
        "depois reinstale o torch e suas extensões a partir de um único índice.",
    "finding.LIBRARY_PATH_OVERRIDE.variable.summary":
        "Uma pasta em {variable} fornece uma {library} que este torch não consegue carregar "
        "(versão errada, arquivo vazio ou danificado, ou feito para outra arquitetura).",
    "finding.LIBRARY_PATH_OVERRIDE.variable.next_action":
        "Remova {variable} para este programa, ou tire essa pasta dela; env -u {variable} "
        "python app.py confirma.",
    "finding.LIBRARY_PATH_OVERRIDE.conda.summary":
        "A pasta lib do ambiente conda (o ativo, ou o do Python verificado) fornece uma "
        "{library} que este torch não consegue carregar (muitas vezes uma libstdc++ mais "
        "antiga do que o torch precisa).",
    "finding.LIBRARY_PATH_OVERRIDE.conda.next_action":
        "Atualize essa biblioteca no ambiente (para a libstdc++: conda install -c conda-forge "
        "libstdcxx-ng), ou execute o programa num ambiente cujas bibliotecas combinem com o torch.",
    "finding.LIBRARY_PATH_OVERRIDE.torch_library.summary":
        "Uma pasta do {variable} contém {library}, uma das bibliotecas do próprio torch (uma "
        "libtorch C++, por exemplo): o carregador a usa antes da cópia do torch, então import "
        "torch mistura dois builds e falha.",
    "finding.LIBRARY_PATH_OVERRIDE.torch_library.next_action":
        "Tire essa pasta do {variable} para programas Python (env -u {variable} python app.py "
        "confirma); defina-o só para o programa C++ que precisa dessa libtorch. Reinstalar o "
        "torch não ajudaria.",
    "finding.LIBRARY_PATH_OVERRIDE.torch_library_loaded.summary":
        "{library}, uma biblioteca do próprio torch, foi carregada de fora da pasta lib/ do "
        "torch (uma libtorch C++ no {variable}, por exemplo): dois builds dividem este "
        "processo, o que só funciona enquanto forem o mesmo build.",
    "finding.LIBRARY_PATH_OVERRIDE.torch_library_loaded.next_action":
        "Tire essa pasta do {variable} para programas Python (env -u {variable} python app.py "
        "carrega a cópia do torch); defina-o só para o programa C++ que precisa dessa libtorch.",
    "finding.CUDA_TOOLKIT_MISMATCH.summary":
        "O CUDA toolkit com que as extensões seriam compiladas (nvcc {toolkit}, encontrado via "
        "{via}) não tem a versão principal do CUDA {build}, para o qual este torch foi compilado:"
        " compilar uma extensão CUDA vai falhar.",
    "finding.CUDA_TOOLKIT_MISMATCH.next_action":
        "Aponte CUDA_HOME para um CUDA toolkit com a versão principal do build (ou ponha o nvcc "
        "dele primeiro no PATH), ou instale um torch para o CUDA {toolkit}. O runtime do próprio "
        "torch não é afetado.",
    "finding.CUDA_LIBRARY_SHADOWED.library_path.summary":
        "Este processo carregou {library} de uma pasta do LD_LIBRARY_PATH, e não do wheel {wheel}"
        " instalado junto do torch: o torch roda com uma biblioteca para a qual não foi compilado"
        " (o clássico conflito de versão do cuDNN).",
    "finding.CUDA_LIBRARY_SHADOWED.library_path.next_action":
        "Retire essa pasta do LD_LIBRARY_PATH para este programa (ou ponha a pasta do wheel "
        "primeiro) e execute a verificação de novo.",
    "finding.CUDA_LIBRARY_SHADOWED.elsewhere.summary":
        "Este processo carregou {library} de uma pasta fora do wheel {wheel} instalado junto do "
        "torch (uma segunda cópia antes no caminho de busca): o torch roda com uma biblioteca "
        "para a qual não foi compilado.",
    "finding.CUDA_LIBRARY_SHADOWED.elsewhere.next_action":
        "Remova a outra cópia (uma pasta de pip install --target ou uma entrada do PYTHONPATH com"
        " nvidia/...), ou reinstale-a na versão que o torch exige; --show-paths e pip list ajudam"
        " a achá-la.",
    "finding.CUDA_LAUNCH_BLOCKING_ON.summary":
        "CUDA_LAUNCH_BLOCKING=1 está definido: cada lançamento de kernel na GPU espera a GPU "
        "terminar, o que torna treino e inferência muito mais lentos.",
    "finding.CUDA_LAUNCH_BLOCKING_ON.next_action":
        "Remova CUDA_LAUNCH_BLOCKING fora da depuração (unset CUDA_LAUNCH_BLOCKING).",
    "finding.HSA_OVERRIDE_ON_SUPPORTED_GPU.summary":
        "HSA_OVERRIDE_GFX_VERSION={value} está definido embora este build ROCm tenha código para "
        "a arquitetura da própria GPU: a substituição faz o runtime escolher código feito para "
        "outra GPU.",
    "finding.HSA_OVERRIDE_ON_SUPPORTED_GPU.next_action":
        "Remova HSA_OVERRIDE_GFX_VERSION (unset HSA_OVERRIDE_GFX_VERSION) e execute a verificação"
        " de novo.",
    "finding.WINDOWS_DLL_LOAD_FAILED.summary":
        "O Windows não conseguiu carregar {dll} ou uma de suas dependências.",
    "finding.WINDOWS_DLL_LOAD_FAILED.next_action":
        "Instale o Microsoft Visual C++ Redistributable (x64) mais recente, depois reinstale o "
        "torch ({reinstall}).",
    "finding.SILENT_DATA_CORRUPTION.wrong.summary":
        "{device} calculou um valor errado ({values}) sem nenhum erro: a assinatura de corrupção "
        "silenciosa de dados (uma GPU com defeito, sua memória ou suas unidades de cálculo).",
    "finding.SILENT_DATA_CORRUPTION.wrong.next_action":
        "Rode a verificação de novo; errado uma vez já é um dispositivo com defeito. Rode o "
        "diagnóstico do fabricante (NVIDIA: dcgmi diag -r 3 e nvidia-smi -q -d ECC; AMD: rvs, a "
        "ROCm Validation Suite); se ele falhar ou o resultado vier errado de novo, tire o nó de "
        "serviço e informe a GPU a quem a opera.",
    "finding.SILENT_DATA_CORRUPTION.non_finite.summary":
        "{device} produziu NaN ou infinito ({values}) num produto pequeno e exato, sem nenhum "
        "erro: a assinatura de corrupção silenciosa de dados (uma GPU com defeito, sua memória ou "
        "suas unidades de cálculo).",
    "finding.SILENT_DATA_CORRUPTION.non_finite.next_action":
        "Rode a verificação de novo; errado uma vez já é um dispositivo com defeito. Rode o "
        "diagnóstico do fabricante (NVIDIA: dcgmi diag -r 3 e nvidia-smi -q -d ECC; AMD: rvs, a "
        "ROCm Validation Suite); se ele falhar ou o resultado vier errado de novo, tire o nó de "
        "serviço e informe a GPU a quem a opera.",
    "finding.VISIBLE_DEVICE_UNMATCHED.summary":
        "CUDA_VISIBLE_DEVICES cita {count} UUID(s) de GPU que nenhuma GPU desta máquina tem: o "
        "CUDA não dá nenhum dispositivo para eles.",
    "finding.VISIBLE_DEVICE_UNMATCHED.next_action":
        "Liste as GPUs desta máquina com nvidia-smi -L e ponha os UUIDs delas em "
        "CUDA_VISIBLE_DEVICES (ou remova a variável); um UUID copiado de outra máquina ou de um "
        "job encerrado não seleciona nada.",
    "finding.HUNG_IN.summary":
        "A verificação ficou travada em {package} ({place}) na etapa {stage} até o limite de "
        "tempo interrompê-la.",
    "finding.HUNG_IN.next_action":
        "Veja o que {package} espera em {place} (um dispositivo, uma trava, a rede, uma "
        "entrada); atualize-o, corrija-o se for seu, ou remova-o, e rode a verificação de novo.",
    "finding.HUNG_IN.torch_backend.summary":
        "import torch ficou travado no plugin de dispositivo {package} ({place}), que o torch "
        "carrega ao ser importado (grupo de pontos de entrada torch.backends), até o limite de "
        "tempo interrompê-lo.",
    "finding.HUNG_IN.torch_backend.next_action":
        "TORCH_DEVICE_BACKEND_AUTOLOAD=0 python app.py roda o torch sem carregar seus plugins de "
        "dispositivo; se você não usa esse dispositivo, remova o plugin (python -m pip uninstall "
        "{distribution}), senão veja o que ele espera em {place} (seu dispositivo, seu runtime).",
    "finding.TIME_LIMIT_REACHED.summary":
        "A verificação ainda trabalhava na etapa {stage} quando o limite de {seconds} s a "
        "encerrou: lenta, não travada.",
    "finding.TIME_LIMIT_REACHED.next_action":
        "Rode a verificação de novo com --timeout {maximum} (o máximo); se o tempo ainda acabar, "
        "veja o que deixa esta máquina lenta (um limite de CPU, um cache frio, um sistema de "
        "arquivos lento).",
    "finding.TIME_LIMIT_REACHED.at_maximum.summary":
        "A verificação ainda trabalhava na etapa {stage} quando o limite de {seconds} s, o "
        "maior, a encerrou: lenta, não travada.",
    "finding.TIME_LIMIT_REACHED.at_maximum.next_action":
        "Veja o que deixa esta máquina lenta (um limite de CPU, um cache frio, um sistema de "
        "arquivos lento) e rode a verificação de novo sem essa causa.",
    "finding.CPU_LIMITED.affinity.summary":
        "Este processo pode usar {usable} das {logical} CPUs lógicas da máquina (sua afinidade "
        "de CPU).",
    "finding.CPU_LIMITED.affinity.next_action":
        "Rode-o sem a afinidade que o limita (taskset, numactl, o cpuset de um job ou contêiner), "
        "ou peça mais CPUs ao escalonador.",
    "finding.CPU_LIMITED.quota.summary":
        "Este processo pode usar {usable} CPU(s) de tempo das {logical} CPUs lógicas da máquina "
        "(a cota de CPU do seu cgroup).",
    "finding.CPU_LIMITED.quota.next_action":
        "Rode-o com uma cota de CPU maior ou sem cota (--cpus de um contêiner, o pedido de CPU de "
        "um job, CPUQuota do systemd), pelo menos uma CPU inteira.",
    "finding.ROCM_KFD_ACCESS.absent.summary":
        "/dev/kfd está ausente: o driver de GPU AMD (amdgpu) não está carregado ou não está "
        "exposto aqui.",
    "finding.ROCM_KFD_ACCESS.absent.next_action":
        "Carregue o driver (sudo modprobe amdgpu) ou, em um contêiner, passe --device=/dev/kfd "
        "--device=/dev/dri.",
    "finding.ROCM_KFD_ACCESS.wsl.summary":
        "O ROCm no WSL 2 não encontra GPU: o WSL não tem /dev/kfd, e o ROCm só chega à GPU por "
        "/dev/dxg com o suporte a WSL da AMD instalado.",
    "finding.ROCM_KFD_ACCESS.wsl.next_action":
        "Não carregue o amdgpu nem passe /dev/kfd (o WSL não tem nenhum dos dois). No Windows, "
        "instale o driver Adrenalin da AMD com suporte a WSL; dentro do WSL, instale o ROCm para "
        "WSL (amdgpu-install -y --usecase=wsl,rocm --no-dkms) e rode a verificação de novo.",
    "finding.ROCM_KFD_ACCESS.no_access.summary":
        "/dev/kfd existe, mas este usuário não pode abri-lo.",
    "finding.ROCM_KFD_ACCESS.no_access.next_action":
        "Adicione o usuário aos grupos render e video (sudo usermod -aG render,video $USER) e "
        "depois faça login novamente; em um contêiner, passe também --group-add video.",
    "finding.ROCM_GFX_UNSUPPORTED.summary":
        "Este pacote ROCm não tem código para a arquitetura gfx desta GPU.",
    "finding.ROCM_GFX_UNSUPPORTED.next_action":
        "Instale um pacote ROCm que suporte esta GPU; para uma placa de consumo de arquitetura "
        "próxima, HSA_OVERRIDE_GFX_VERSION (por exemplo 11.0.0 para gfx110x) é a solução "
        "alternativa conhecida.",
    "finding.SLOW_FIRST_CALL.summary":
        "O primeiro cálculo levou {seconds} s: os kernels provavelmente foram compilados em "
        "tempo de execução (PTX) ou o dispositivo demorou a despertar.",
    "finding.SLOW_FIRST_CALL.next_action":
        "Execute a verificação novamente: se for rápida na segunda vez, era o cache JIT; instale "
        "um pacote com código nativo para esta GPU para evitar isso.",
    "finding.HOST_MEMORY_EXHAUSTED.summary":
        "O processo ficou sem memória do host (CPU): std::bad_alloc, MemoryError, ou o carregador "
        "não conseguiu alocar.",
    "finding.HOST_MEMORY_EXHAUSTED.next_action":
        "Libere memória ou aumente o limite do processo: ulimit -v (espaço de endereços), o "
        "limite de memória do contêiner (docker run --memory), a memória pedida pelo job; só "
        "importar o torch precisa de cerca de 1 GB de espaço de endereços.",
    "finding.HOST_MEMORY_EXHAUSTED.limited.summary":
        "O processo ficou sem memória sob um limite imposto a ele ({command}: {limit}): só "
        "importar o torch mapeia cerca de 1 GB, e o driver de uma GPU reserva muito mais espaço de "
        "endereços.",
    "finding.HOST_MEMORY_EXHAUSTED.limited.next_action":
        "Aumente ou remova o limite para este programa ({command} unlimited no shell que o "
        "inicia), ou mude a configuração do job, do contêiner ou do nó de login que o impõe (o "
        "Slurm repassa ao job os limites do shell que o submeteu); depois rode a verificação de "
        "novo.",
    "finding.HOST_MEMORY_EXHAUSTED.cuda_reservation.summary":
        "O CUDA não conseguiu iniciar sob o limite de espaço de endereços imposto a este "
        "processo ({command}: {limit}): o seu \"out of memory\" quer dizer que o driver não "
        "conseguiu reservar o espaço de endereços do host onde mapeia a memória das GPUs (pelo "
        "menos do tamanho dessa memória, e nunca usado de fato). A memória da própria GPU não se "
        "esgotou.",
    "finding.HOST_MEMORY_EXHAUSTED.cuda_reservation.next_action":
        "Remova o limite para este programa ({command} unlimited no shell que o inicia; limite a "
        "memória pelo pedido de memória do job ou do contêiner, que não atrapalha o CUDA), ou "
        "mude a configuração do job ou do nó de login que o impõe (o Slurm repassa ao job os "
        "limites do shell que o submeteu); depois rode a verificação de novo.",
    "finding.TOOL_ISOLATED_INSTALL.pipx.summary":
        "A verificação rodou no ambiente pipx da própria ferramenta, que não tem torch: ela não "
        "diz nada sobre o Python do seu projeto.",
    "finding.TOOL_ISOLATED_INSTALL.pipx.next_action":
        "Verifique o interpretador do seu projeto: kernodeck-diagnostic --python "
        "/caminho/do/projeto/bin/python (nada é instalado nele), ou rode o arquivo único com ele: "
        "/caminho/do/projeto/bin/python kernodeck-diagnostic-v1.pyz.",
    "finding.TOOL_ISOLATED_INSTALL.uv_tool.summary":
        "A verificação rodou no ambiente uv tool da própria ferramenta, que não tem torch: ela "
        "não diz nada sobre o Python do seu projeto.",
    "finding.TOOL_ISOLATED_INSTALL.uv_tool.next_action":
        "Verifique o interpretador do seu projeto: kernodeck-diagnostic --python "
        "/caminho/do/projeto/bin/python (nada é instalado nele), ou rode o arquivo único com ele: "
        "/caminho/do/projeto/bin/python kernodeck-diagnostic-v1.pyz.",
    "finding.TOOL_ISOLATED_INSTALL.venv.summary":
        "A verificação rodou no ambiente virtual que contém o comando kernodeck-diagnostic, e o "
        "torch não está instalado nele.",
    "finding.TOOL_ISOLATED_INSTALL.venv.next_action":
        "Se o seu projeto usa outro ambiente, verifique esse: kernodeck-diagnostic --python "
        "/caminho/do/projeto/bin/python, ou /caminho/do/projeto/bin/python -m "
        "kernodeck_diagnostic (com o pacote instalado lá), ou esse Python com o arquivo único. Se "
        "este é o ambiente do seu projeto, instale o torch nele.",

    "finding.SLOW_FIRST_CALL.persistence_off.summary":
        "O primeiro cálculo levou {seconds} s e o modo de persistência está desligado: a GPU "
        "provavelmente foi inicializada para este processo (segundos por GPU), além de qualquer "
        "compilação em tempo de execução (PTX).",
    "finding.SLOW_FIRST_CALL.persistence_off.next_action":
        "Ative a persistência (sudo systemctl enable --now nvidia-persistenced, ou sudo "
        "nvidia-smi -pm 1) e execute a verificação novamente; se ainda for lenta na segunda vez, "
        "instale um pacote com código nativo para esta GPU.",
    # -- o nó, a saúde das GPUs e as variáveis (report/findings/, facts/node.py) ---------------
    "finding.MASTER_PORT_IN_USE.summary":
        "A porta do store do job (MASTER_PORT) já estava ocupada no nó do rank 0: o store não "
        "consegue iniciar (\"Address already in use\") e todos os ranks esperam por ele.",
    "finding.MASTER_PORT_IN_USE.next_action":
        "Defina MASTER_PORT com uma porta livre, ou encerre o que a ocupa (muitas vezes um rank "
        "0 que sobrou de um job anterior).",
    "finding.DUPLICATE_GPU_PER_RANK.summary":
        "Dois ranks de um mesmo nó usam a mesma GPU: o NCCL recusa o grupo (\"Duplicate GPU "
        "detected\").",
    "finding.DUPLICATE_GPU_PER_RANK.next_action":
        "Inicie no máximo um rank por GPU (--nproc-per-node não maior que o número de GPUs, ou "
        "uma GPU por tarefa pelo escalonador) e escolha o dispositivo de cada rank por "
        "LOCAL_RANK.",
    "finding.NCCL_P2P_BROKEN.summary":
        "Uma cópia direta entre duas GPUs que calculam corretamente chegou errada ou não "
        "terminou: as transferências peer-to-peer estão quebradas neste nó (muitas vezes o ACS do "
        "PCIe ou o IOMMU), e o NCCL as usa entre essas GPUs.",
    "finding.NCCL_P2P_BROKEN.next_action":
        "Desative o ACS do PCIe (BIOS ou setpci) ou ponha o IOMMU em passthrough (iommu=pt), ou "
        "peça ao provedor; enquanto isso, NCCL_P2P_DISABLE=1 faz o NCCL passar pela memória do "
        "host.",
    "finding.NCCL_SOCKET_IFNAME_MISSING.summary":
        "{variables} não nomeia nenhuma interface de rede deste nó: o NCCL (ou o gloo) não "
        "encontra interface de socket e o grupo não se forma.",
    "finding.NCCL_SOCKET_IFNAME_MISSING.next_action":
        "Nomeie uma interface que exista em todos os nós (veja ip link; um prefixo como eth ou "
        "ib corresponde a eth0 ou ib0), ou remova a variável.",
    "finding.MEMLOCK_LOW.summary":
        "Há dispositivos RDMA, mas a memória bloqueada é limitada: o NCCL não consegue "
        "registrar seus buffers (\"ibv_reg_mr failed: Cannot allocate memory\").",
    "finding.MEMLOCK_LOW.next_action":
        "Eleve o limite para ilimitado no job (ulimit -l unlimited; memlock em "
        "/etc/security/limits.conf; PropagateResourceLimits ou --ulimit memlock=-1 do "
        "contêiner).",
    "finding.SHM_TOO_SMALL.small.summary":
        "A pasta de memória compartilhada /dev/shm tem só {size_mib} MiB: os workers do "
        "DataLoader morrem com \"Bus error\" e o NCCL não consegue criar seus segmentos.",
    "finding.SHM_TOO_SMALL.small.next_action":
        "Dê mais ao contêiner: docker run --shm-size=8g (ou --ipc=host); no Kubernetes monte "
        "um emptyDir em memória (medium: Memory) em /dev/shm.",
    "finding.SHM_TOO_SMALL.read_only.summary":
        "Este usuário não pode escrever na pasta de memória compartilhada /dev/shm: os workers "
        "do DataLoader e o NCCL não conseguem compartilhar memória entre processos.",
    "finding.SHM_TOO_SMALL.read_only.next_action":
        "Monte um /dev/shm gravável (um tmpfs, ou docker run --ipc=host / --shm-size=8g; no "
        "Kubernetes um emptyDir em memória).",
    "finding.DEVICE_ORDER_MISMATCH.summary":
        "GPUs de modelos diferentes e um índice em CUDA_VISIBLE_DEVICES: o CUDA numera primeiro "
        "a GPU mais rápida, o nvidia-smi pelo barramento PCI, então o mesmo índice designa "
        "placas diferentes.",
    "finding.DEVICE_ORDER_MISMATCH.next_action":
        "export CUDA_DEVICE_ORDER=PCI_BUS_ID (para que os índices do CUDA sejam os do "
        "nvidia-smi), ou selecione as GPUs pelo UUID (nvidia-smi -L).",
    "finding.MIG_MULTIPLE_LISTED.summary":
        "CUDA_VISIBLE_DEVICES lista {count} dispositivos MIG, mas um processo CUDA usa só o "
        "primeiro que alcança.",
    "finding.MIG_MULTIPLE_LISTED.next_action":
        "Dê a cada processo um dispositivo MIG (CUDA_VISIBLE_DEVICES=MIG-<uuid>); execute um "
        "processo por fatia.",
    "finding.NVIDIA_MODULE_NOT_LOADED.summary":
        "Há uma GPU NVIDIA no barramento PCI, mas o módulo do kernel da NVIDIA não está "
        "carregado.",
    "finding.NVIDIA_MODULE_NOT_LOADED.next_action":
        "Carregue-o (sudo modprobe nvidia; o dmesg diz por que falha); após uma atualização do "
        "kernel, recompile-o para o kernel em execução (DKMS: sudo dkms autoinstall); com Secure "
        "Boot, registre a chave de assinatura do módulo (mokutil) ou assine-o; ou instale o "
        "driver.",
    "finding.NOUVEAU_BOUND.summary":
        "{count} GPU(s) NVIDIA estão presas ao nouveau, o driver de código aberto, que o CUDA "
        "não pode usar.",
    "finding.NOUVEAU_BOUND.next_action":
        "Coloque o nouveau na lista negra (blacklist nouveau e options nouveau modeset=0 em "
        "/etc/modprobe.d/), refaça o initramfs (sudo update-initramfs -u ou dracut -f), "
        "reinicie e carregue o driver da NVIDIA.",
    "finding.CONTAINER_NO_COMPUTE_CAPABILITY.summary":
        "Os dispositivos NVIDIA e a NVML (a biblioteca do nvidia-smi) estão aqui, mas a "
        "libcuda.so.1 não: o runtime do contêiner deu as bibliotecas utilitárias do driver sem "
        "as de computação.",
    "finding.CONTAINER_NO_COMPUTE_CAPABILITY.next_action":
        "Inicie o contêiner com NVIDIA_DRIVER_CAPABILITIES=compute,utility (ou all), ou "
        "--gpus 'all,\"capabilities=compute,utility\"'; no Compose, capabilities: [gpu] ou "
        "[compute, utility].",
    "finding.WSL_LINUX_DRIVER_INSTALLED.system.summary":
        "Isto é o WSL 2, e o carregador encontra a libcuda.so.1 de um driver Linux antes da do "
        "próprio WSL: um driver NVIDIA para Linux (ou um pacote do toolkit) foi instalado na "
        "distribuição.",
    "finding.WSL_LINUX_DRIVER_INSTALLED.system.next_action":
        "Use só o driver do Windows: remova os pacotes do driver Linux da distribuição (p. ex. "
        "sudo apt remove --purge 'libnvidia-compute-*' 'nvidia-driver-*'; instale o toolkit com "
        "cuda-toolkit-12-x, nunca os metapacotes cuda ou cuda-drivers) e depois sudo ldconfig.",
    "finding.WSL_LINUX_DRIVER_INSTALLED.library_path.summary":
        "Isto é o WSL 2, e uma pasta de LD_LIBRARY_PATH fornece uma libcuda.so.1 antes da "
        "biblioteca do driver do próprio WSL.",
    "finding.WSL_LINUX_DRIVER_INSTALLED.library_path.next_action":
        "Tire essa pasta do LD_LIBRARY_PATH (a libcuda.so.1 do WSL fica em /usr/lib/wsl/lib) e "
        "remova dela as bibliotecas de driver Linux.",
    "finding.LIBCUDA_LINK_MISSING.summary":
        "A libcuda.so.1 é encontrada, mas não há libcuda.so ao lado: o torch.compile (Triton) "
        "liga com -lcuda e falha com \"libcuda.so cannot found\".",
    "finding.LIBCUDA_LINK_MISSING.next_action":
        "Crie o link na pasta do driver (sudo ln -s libcuda.so.1 libcuda.so lá, depois sudo "
        "ldconfig), ou defina TRITON_LIBCUDA_PATH como uma pasta que tenha a libcuda.so.",
    "finding.GPU_NODES_MISMATCH.summary":
        "Este processo alcança menos GPUs do que o driver NVIDIA tem: limites de dispositivos de "
        "um escalonador ou de um contêiner o impedem de chegar às outras.",
    "finding.GPU_NODES_MISMATCH.next_action":
        "Peça as GPUs ao escalonador (Slurm: --gres=gpu:N ou --gpus=N; Kubernetes: "
        "nvidia.com/gpu) em vez de expor dispositivos à mão; fora de um job, verifique as "
        "permissões dos nós de dispositivo (ls -l /dev/nvidia*).",
    "finding.GPU_MEMORY_HELD.summary":
        "Antes da verificação, só {free} GiB dos {total} GiB de {device} estavam livres: outros "
        "processos ocupam a maior parte da memória.",
    "finding.GPU_MEMORY_HELD.next_action":
        "Encontre quem a ocupa (o nvidia-smi lista) e pare-os, ou escolha uma GPU livre "
        "(--device-index, CUDA_VISIBLE_DEVICES).",
    "finding.GPU_BUSY.summary":
        "A GPU está ocupada ou indisponível: em um modo de computação exclusivo ou proibido, "
        "outro processo a tem, ou nenhum processo pode criar um contexto nela.",
    "finding.GPU_BUSY.next_action":
        "Use uma GPU livre, pare o processo que a ocupa, ou peça a um administrador que volte o "
        "modo de computação ao padrão (sudo nvidia-smi -c DEFAULT).",
    "finding.ECC_UNCORRECTABLE.summary":
        "A GPU relata erros de memória ECC não corrigíveis: uma falha de hardware, não de "
        "software.",
    "finding.ECC_UNCORRECTABLE.next_action":
        "Drene a GPU (nenhum job novo), reinicie-a (sudo nvidia-smi -r) ou reinicie o nó; se os "
        "erros voltarem, chame o provedor ou o fabricante para substituí-la.",
    "finding.GPU_NEEDS_RESET.summary":
        "Páginas ou linhas de memória aguardam ser retiradas ou remapeadas: a GPU precisa ser "
        "reiniciada para que isso tenha efeito.",
    "finding.GPU_NEEDS_RESET.next_action":
        "Drene a GPU e reinicie-a (sudo nvidia-smi -r -i N) ou reinicie o nó; se continuar "
        "acontecendo, chame o provedor.",
    "finding.GPU_LOST.summary":
        "Uma GPU está perdida: o driver não a alcança (Xid 79, caiu do barramento), uma falha de "
        "hardware ou de alimentação.",
    "finding.GPU_LOST.next_action":
        "O nó precisa de atenção: drene-o, reinicie-o e verifique a alimentação e o encaixe da "
        "GPU (o dmesg mostra o Xid); chame o provedor se acontecer de novo.",
    "finding.PERSISTENCE_MODE_OFF.summary":
        "O modo de persistência está desligado e o início foi lento: sem ele o driver "
        "inicializa as GPUs para cada processo (1-3 s por GPU) e as desmonta depois.",
    "finding.PERSISTENCE_MODE_OFF.next_action":
        "Ative-o: sudo systemctl enable --now nvidia-persistenced (ou sudo nvidia-smi -pm 1).",
    "finding.DEBUG_INJECTION_SET.summary":
        "Variáveis que mudam o comportamento do CUDA (depuradores, profilers, injeção, core "
        "dumps) estão definidas: {names}.",
    "finding.DEBUG_INJECTION_SET.next_action":
        "Remova-as nas execuções de produção (unset {names}); mantenha-as só ao depurar ou "
        "perfilar.",
    "finding.ROCM_VISIBILITY_CONFLICT.summary":
        "HIP_VISIBLE_DEVICES está definida junto com {variables}, e elas selecionam de forma "
        "diferente: o ROCr aplica ROCR_VISIBLE_DEVICES primeiro e o HIP indexa o que sobra.",
    "finding.ROCM_VISIBILITY_CONFLICT.next_action":
        "Use uma só variável (ROCR_VISIBLE_DEVICES no Linux) e remova as outras.",

    # -- a camada de bibliotecas (--extensions, --kernels; docs/libraries.md) -------------------
    "finding.EXTENSION_TORCH_MISMATCH.declared.summary":
        "{name} {version} exige torch{wants}, mas o torch instalado é {torch}: foi compilado para "
        "outro torch.",
    "finding.EXTENSION_TORCH_MISMATCH.declared.next_action":
        "Instale o torch e {name} juntos, fixados, do mesmo índice, para que o pip escolha o "
        "{name} compilado para esse torch: {command}; ou atualize o torch para o que {name} exige.",
    "finding.EXTENSION_TORCH_MISMATCH.built.summary":
        "{name} {version} foi compilado para outro torch que não o {torch} instalado: a "
        "importação falha com os sinais disso.",
    "finding.EXTENSION_TORCH_MISMATCH.built.next_action":
        "Instale o torch e {name} juntos, fixados, do mesmo índice, para que o pip escolha o "
        "{name} compilado para esse torch: {command}.",
    "finding.EXTENSION_CUDA_MISMATCH.summary":
        "{name} {version} foi compilado para {theirs}, o torch {torch} para {ours}.",
    "finding.EXTENSION_CUDA_MISMATCH.next_action":
        "Reinstale {name} a partir do índice da compilação do torch, com o torch fixado: "
        "{command}.",
    "finding.EXTENSION_IMPORT_FAILED.failed.summary":
        "{name} {version} falha na importação: {what}",
    "finding.EXTENSION_IMPORT_FAILED.failed.next_action":
        "Importe-o sozinho para ver o erro inteiro (python -c \"import {module}\") e reinstale-o "
        "para este torch e este Python, com o que lhe falta.",
    "finding.EXTENSION_IMPORT_FAILED.timeout.summary":
        "A importação de {name} {version} não terminou em {seconds} s: espera por algo (um lock, "
        "a rede, um driver) ou é muito lenta.",
    "finding.EXTENSION_IMPORT_FAILED.timeout.next_action":
        "Importe-o sozinho para ver onde espera: python -X importtime -c \"import {module}\" "
        "(ou py-spy dump no processo travado).",
    "finding.DTYPE_UNSUPPORTED.summary":
        "{device} não tem {dtype} nativo: o produto de matrizes em {dtype} não é suportado ali.",
    "finding.DTYPE_UNSUPPORTED.next_action":
        "Use {instead} (precisão mista: torch.autocast(device_type=\"cuda\", "
        "dtype=torch.float16) com torch.amp.GradScaler), ou um dispositivo com {dtype} nativo "
        "(bfloat16: NVIDIA Ampere, sm_80, ou mais recente).",
    "finding.COMPILER_MISSING.cpp.summary":
        "torch.compile não encontrou um compilador C++ que funcione: na CPU ele compila com um o "
        "código que gera.",
    "finding.COMPILER_MISSING.cpp.next_action":
        "Instale um (Debian, Ubuntu: sudo apt install g++; Fedora: sudo dnf install gcc-c++; "
        "conda: conda install -c conda-forge cxx-compiler; Windows: Visual Studio Build Tools) "
        "ou aponte CXX para um que funcione; confira com g++ --version.",
    "finding.COMPILER_MISSING.cxx_not_found.summary":
        "torch.compile não conseguiu executar o compilador C++ que CXX indica: CXX aponta para "
        "um programa que este PATH não executa, e na CPU torch.compile não tenta outro.",
    "finding.COMPILER_MISSING.cxx_not_found.next_action":
        "Remova CXX (env -u CXX python app.py, ou unset CXX no shell ou no script do job que o "
        "define) ou aponte-o para um compilador que funcione aqui; confira com $CXX --version.",
    "finding.COMPILER_MISSING.triton.summary":
        "torch.compile não encontrou um Triton que funcione: numa GPU ele gera kernels Triton.",
    "finding.COMPILER_MISSING.triton.next_action":
        "Instale o Triton com que o torch foi compilado (python -m pip install triton na versão "
        "que o torch exige; vem com as wheels CUDA do torch para Linux; ROCm: "
        "pytorch-triton-rocm; Windows: triton-windows).",
    "finding.COMPILE_CACHE_UNUSABLE.not_a_folder.summary":
        "torch.compile vai falhar nos seus programas: a pasta de cache dele, "
        "torchinductor_<seu nome de usuário> na pasta temporária, é um arquivo.",
    "finding.COMPILE_CACHE_UNUSABLE.not_a_folder.next_action":
        'Remova esse arquivo (rm "${{TMPDIR:-/tmp}}/torchinductor_$(whoami)"), ou aponte '
        "TORCHINDUCTOR_CACHE_DIR para uma pasta sua.",
    "finding.COMPILE_CACHE_UNUSABLE.not_writable.summary":
        "torch.compile vai falhar nos seus programas: a pasta de cache dele, "
        "torchinductor_<seu nome de usuário> na pasta temporária, é uma pasta em que você não"
        " pode escrever (deixada por uma execução como outro usuário, como sudo -E, ou criada"
        " por outro usuário).",
    "finding.COMPILE_CACHE_UNUSABLE.not_writable.next_action":
        'Peça ao dono que a remova (sudo rm -r "${{TMPDIR:-/tmp}}/torchinductor_$(whoami)"), '
        "ou aponte TORCHINDUCTOR_CACHE_DIR para uma pasta sua; nunca a torne gravável por "
        "todos: arquivos de outro usuário ali rodariam nos seus programas.",
    "finding.FUSED_ATTENTION_UNAVAILABLE.summary":
        "scaled_dot_product_attention não pode usar {backends} aqui: recorre a kernels mais "
        "lentos.",
    "finding.FUSED_ATTENTION_UNAVAILABLE.next_action":
        "Nada está quebrado. A evidência dá a razão do torch para cada backend (uma arquitetura "
        "de GPU mais antiga, um dtype ou tamanho de cabeça que ele não aceita, uma compilação "
        "sem ele); flash attention precisa de uma GPU NVIDIA Ampere (sm_80) ou mais recente.",

    # -- the tool's own sentences in error.message (error.message_key) -----------------------
    "error.backend_absent": "o pacote não declara nenhum backend de GPU (nem CUDA, nem HIP, nem "
                            "XPU, nem MPS)",
    "error.torch_shadowed":
        "'import torch' carregaria {module} (origem: {origin}), não um pacote PyTorch instalado: "
        "não foi importado",
    "error.torch_incomplete":
        "'import torch' deu um módulo sem {missing}: não é um PyTorch",
    "error.gpu_unavailable": "torch.cuda.is_available() é False",
    "error.gpu_unavailable.reason": "torch.cuda.is_available() é False: {reason}",
    "error.backend_unavailable": "{call} é False",
    "error.backend_unavailable.reason": "{call} é False: {reason}",
    "error.no_visible_device": "nenhum dispositivo visível",
    "error.no_visible_device.reason": "nenhum dispositivo visível: {reason}",
    "error.device_index_invalid": "índice de dispositivo {index} para {count} visíveis",
    "error.extension_failed":
        "{count} de {total} extensão(ões) do torch falharam na importação; a primeira: {name} "
        "{version}: {what}",
    "error.extension_failed.timeout":
        "{count} de {total} extensão(ões) do torch falharam na importação; a primeira: {name} "
        "{version}, cuja importação não terminou em {seconds} s",
    "error.extension_failed.skipped":
        "o tempo da verificação acabou antes de importar {count} de {total} extensão(ões) do "
        "torch: dê um --timeout maior",
    "error.kernel_wrong":
        "o kernel {kernel} deu um resultado errado (maior diferença da resposta conhecida: "
        "{difference})",
    "error.check_failed": "resultado errado: {what}",
    "error.no_verified_result": "o worker não relatou nenhum resultado verificado",
    "error.unreadable_log":
        "o registro de eventos do worker tinha {count} linha(s) ilegível(is) e nenhum resultado"
        " verificado",
    "error.timeout_hung_in":
        "nenhum resultado em {seconds} s; o worker foi interrompido durante {at}, travado em "
        "{package} ({place})",
    "error.timeout": "nenhum resultado em {seconds} s; o worker foi interrompido durante {at}",
    "error.launcher_stop.time_limit":
        "o job atingiu seu limite de tempo do Slurm durante {at}: o Slurm o parou (SIGTERM) antes"
        " de um resultado, não é uma falha deste rank",
    "error.launcher_stop.cancelled":
        "o job foi cancelado durante {at} (scancel, srun interrompido, uma tarefa com falha sob "
        "--kill-on-bad-exit, uma preempção): parado antes de um resultado, não é uma falha deste "
        "rank",
    "error.launcher_stop.sigterm":
        "o lançador parou o job durante {at} (SIGTERM: cancelado, ou seu limite de tempo) antes "
        "de um resultado, não é uma falha deste rank",
    "error.collective.missing_ranks":
        "rank(s) {ranks} não responderam dentro do limite de tempo (coletiva: {status})",
    "error.collective.store_unresolvable":
        "MASTER_ADDR não resolve para um endereço: o store do job nunca foi alcançado",
    "error.collective.store_refused":
        "nada escuta no endereço e na porta do store (conexão recusada): o rank 0 nunca serviu o "
        "store ali, ou MASTER_ADDR / MASTER_PORT diferem entre os ranks",
    "error.collective.store_unreachable":
        "o endereço do store não responde (sem rota, ou sem resposta a tempo): um endereço de "
        "outra rede, ou um firewall",
    "error.collective.store_silent":
        "um programa que não é o store do job ocupa a porta do store: o store nunca respondeu",
    "error.collective.store_in_use":
        "o rank 0 não pôde servir o store: a porta está em uso por outro programa",
    "error.collective.store_foreign":
        "o rank 0 não pôde servir o store: o store de outro job ocupa a porta (dois jobs na "
        "mesma MASTER_PORT)",
    "error.collective.duplicated_ranks":
        "rank(s) {ranks} entraram duas vezes: dois processos foram iniciados como o mesmo rank "
        "(RANK ou SLURM_PROCID igual em dois processos, ou dois jobs no mesmo store)",
    "error.collective.launcher_tasks":
        "o lançador iniciou {tasks} tarefa(s) mas os ranks formaram um mundo de {world_size}: "
        "as variáveis do torchrun exportadas numa etapa do srun deixam cada tarefa sozinha",
    "next.launcher_stopped":
        "Nada foi provado neste nó, nem contra ele: o job foi parado antes do fim da verificação."
        " Execute-a de novo num job cujo limite de tempo seja maior que --timeout, e procure no "
        "log do lançador quem o parou.",
    "next.collective.duplicated_ranks":
        "Dê a cada processo o seu próprio rank (RANK de 0 a WORLD_SIZE - 1, uma vez cada), e uma "
        "MASTER_PORT por job.",
    "next.collective.launcher_tasks":
        "Não exporte RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR e MASTER_PORT numa etapa do srun: "
        "deixe cada tarefa tomar o rank do Slurm (SLURM_PROCID), ou rode o torchrun sob o srun.",
    "error.collective.world_sizes":
        "os ranks discordam do tamanho do mundo ({sizes}): defina WORLD_SIZE (ou srun -n) igual "
        "para todos os ranks",
    "error.collective.missing_ranks_slurm":
        "rank(s) {ranks} nunca responderam dentro do limite de tempo (coletiva: {status}); o srun "
        "espera por uma tarefa parada por padrão: use srun --kill-on-bad-exit=1",
    "next.collective.store":
        "Verifique MASTER_ADDR e MASTER_PORT em todos os ranks: o endereço precisa resolver e "
        "alcançar o nó do rank 0 a partir de cada nó, e a porta estar livre lá no início do job.",
    "next.collective.world_sizes":
        "Dê o mesmo tamanho de mundo a todos os ranks (--nnodes e --nproc-per-node do torchrun, "
        "ou srun -n); não exporte WORLD_SIZE só para alguns ranks de um job.",
    "next.collective.missing_slurm":
        "Rode o srun com --kill-on-bad-exit=1 (por padrão ele espera por uma tarefa parada), "
        "depois leia os relatórios dos ranks ausentes e o log do job para saber por que pararam.",
    "error.collective.failed_ranks": "rank(s) {ranks} falharam (coletiva: {status})",
    "error.collective.wrong_sum": "o all-reduce deu {observed}, esperado {expected}",
    "error.collective.status":
        "a coletiva terminou com o estado {status} ({backend}, {world_size} ranks)",
    "error.collective.not_gathered":
        "os resultados dos ranks nunca chegaram a este rank (coletiva: {status})",
    "error.timeout_at_start":
        "o interpretador não tinha iniciado em {seconds} s: ele trava na inicialização, ou inicia "
        "mais devagar do que o limite de tempo permite (um script intermediário, um sistema de "
        "arquivos lento, um hook de site)",
    "error.worker_ended.signal":
        "o worker foi encerrado pelo sinal {signal} durante {at}, sem resultado final",
    "error.worker_ended.exit":
        "o worker terminou com o código {code} durante {at}, sem resultado final",
    "error.worker_ended.status":
        "o worker terminou com o status {status} durante {at}, sem resultado final",
    "error.worker_ended.running":
        "o worker ainda estava em execução ao ser parado durante {at}, sem resultado final",
    "error.worker_ended.signal_stderr":
        "o worker foi encerrado pelo sinal {signal} durante {at}, sem resultado final; sua última "
        "linha no stderr: {stderr}",
    "error.worker_ended.exit_stderr":
        "o worker terminou com o código {code} durante {at}, sem resultado final; sua última "
        "linha no stderr: {stderr}",
    "error.worker_ended.status_stderr":
        "o worker terminou com o status {status} durante {at}, sem resultado final; sua última "
        "linha no stderr: {stderr}",
    "error.worker_ended.running_stderr":
        "o worker ainda estava em execução ao ser parado durante {at}, sem resultado final; sua "
        "última linha no stderr: {stderr}",
    "error.not_started.worker_missing":
        "o worker não pôde ser iniciado: o módulo do worker falta na instalação da própria "
        "ferramenta ({detail}); reinstale a ferramenta",
    "error.not_started.temp_folder":
        "o worker não pôde ser iniciado: nenhuma pasta temporária privada ({detail})",
    "error.not_started.temp_not_writable":
        "o worker não pôde ser iniciado: a pasta temporária não é gravável ({detail})",
    "error.not_started.file_size_limit":
        "o worker não pôde ser iniciado: um limite de tamanho de arquivo deste processo (ulimit "
        "-f) recusou os arquivos dele na pasta temporária ({detail}); aumente ou remova o limite",
    "error.not_started.interpreter":
        "o worker não pôde ser iniciado: o interpretador não pôde ser iniciado ({detail})",

    # -- terminal and markdown -------------------------------------------------------------------
    "ui.status.passed": "APROVADO",
    "ui.status.failed": "FALHOU",
    "ui.headline": "{status} {code} (código de saída {exit_code}) na etapa {stage}",
    "ui.headline.exit_as":
        "{status} {code} (código de saída {exit_code}, {exit_as}) na etapa {stage}",
    "ui.label.runtime": "plataforma",
    "ui.label.pytorch": "pytorch",
    "ui.label.gpu": "gpu",
    "ui.label.execution": "execução",
    "ui.label.host": "sistema",
    "ui.label.distributed": "distribuído",
    "ui.distributed.job": "{launcher}, rank {rank} de {world_size}",
    "ui.distributed.collective": "coletiva {status}: soma {observed} (esperada {expected})",
    "ui.distributed.collective_wrong_sum":
        "coletiva com soma errada: {observed} (esperada {expected})",
    "ui.distributed.rank": "rank {rank}",
    "ui.distributed.rank_entry": "{code} em {stage}, nó {node}, rank local {local_rank}",
    "ui.distributed.missing": "ranks ausentes: {ranks}",
    "ui.distributed.launcher_stopped":
        "o lançador parou o job durante a verificação (SIGTERM): não é uma falha deste rank",
    "ui.distributed.launcher_stop.time_limit":
        "o job atingiu seu limite de tempo do Slurm durante a verificação (SIGTERM): não é uma "
        "falha deste rank",
    "ui.distributed.launcher_stop.cancelled":
        "o job foi cancelado durante a verificação (SIGTERM antes de seu limite de tempo): não é "
        "uma falha deste rank",
    "ui.label.error": "erro",
    "ui.label.warning": "aviso",
    "ui.label.findings": "achados",
    "ui.label.next": "próxima ação",
    "ui.label.do": "ação",
    "ui.label.paths": "caminhos",
    "ui.runtime.unknown": "desconhecida (o processo de verificação não iniciou)",
    "ui.runtime.environment": "ambiente {kind}",
    "ui.pytorch.not_imported": "não importado",
    "ui.pytorch.unknown_version": "versão desconhecida",
    "ui.pytorch.distribution": "distribuição instalada {version}",
    "ui.gpu.not_queried": "não consultada no modo CPU",
    "ui.gpu.available": "disponível",
    "ui.gpu.not_available": "indisponível",
    "ui.gpu.visible": "visíveis: {count}",
    "ui.device.passed": "aprovado em {ms} ms",
    "ui.device.failed": "{code} em {where}: {what}",
    "ui.device.not_checked": "não verificado: o worker foi parado antes deste dispositivo",
    "ui.label.peers": "pares",
    "ui.peers.verified": "{verified} de {total} cópias verificadas",
    "ui.peers.access": "acesso direto {access} de {total}",
    "ui.peers.access_unknown": "acesso direto desconhecido",
    "ui.peers.access_partly": "acesso direto {access} de {total}, {unknown} desconhecido(s)",
    "ui.peers.not_tried": "{count} cópia(s) não tentada(s) (o worker foi parado antes): {copies}",
    "ui.peers.failed": "{source} -> {target}: {code}",
    "ui.execution.not_reached": "não alcançada",
    "ui.execution.on": "em {device}",
    "ui.execution.product": "produto {state}",
    "ui.execution.gradient": "gradiente {state}",
    "ui.execution.verified": "ok",
    "ui.execution.not_verified": "NÃO verificado",
    "ui.execution.synchronized": "sincronizado",
    "ui.host.not_found": "{tool} não encontrado",
    "ui.host.timeout": "{tool} excedeu o tempo limite (3 s)",
    "ui.host.failed": "{tool} falhou",
    "ui.host.driver": "driver {version}",
    "ui.host.mig": "{count} dispositivo(s) MIG",
    "ui.label.system": "máquina",
    "ui.label.driver": "driver",
    "ui.label.toolkit": "toolkit",
    "ui.label.configuration": "configuração",
    "ui.label.cuda_libraries": "libs cuda",
    "ui.label.packages": "pacotes",
    "ui.system.kernel": "kernel {kernel}",
    "ui.system.cpus": "{count} CPUs lógicas",
    "ui.system.cpus_usable": "{count} CPUs lógicas, {usable} utilizáveis por este processo",
    "ui.system.driver": "NVIDIA {version} (módulo do kernel)",
    "ui.system.toolkit":
        "nvcc {version} (via {via}), para compilar extensões, não o runtime do torch",
    "ui.system.toolkit.default_location": "o local padrão",
    "ui.system.toolkit_not_found": "nenhum CUDA toolkit encontrado (para compilar extensões)",
    "ui.system.toolkit_failed": "o nvcc não respondeu",
    "ui.pytorch.debug": "build de depuração",
    "ui.libraries.other": "outra cópia carregada",
    "ui.error.at": "na etapa {where}: {what}",
    "ui.warning.during": "{category} durante {stage}: {message}",
    "ui.paths.interpreter": "interpretador {path}",
    "ui.paths.torch": "torch {path}",
    "ui.paths.note": "(mostrado apenas neste terminal, nunca salvo em um relatório)",
    "ui.live.interpreter": "iniciando o Python",
    "ui.live.import": "importando o torch",
    "ui.live.backend": "lendo o pacote",
    "ui.live.device": "consultando a GPU",
    "ui.live.compute": "calculando",
    "ui.live.extensions": "importando extensões do torch",
    "ui.live.kernels": "executando kernels",
    "ui.label.extensions": "extensões",
    "ui.label.kernels": "kernels",
    "ui.libraries.none": "nenhuma instalada",
    "ui.libraries.not_reached": "não alcançado",
    "ui.libraries.status.passed": "ok",
    "ui.libraries.status.failed": "FALHOU",
    "ui.libraries.status.timeout": "ESGOTOU O TEMPO",
    "ui.libraries.status.skipped": "pulado",
    "ui.libraries.status.unsupported": "não suportado",
    "ui.libraries.requires": "exige torch{wants}",
    "ui.libraries.bandwidth": "{to_device} GB/s para o dispositivo, {to_host} GB/s de volta",
    "ui.libraries.compile": "compilado em {ms} ms",
    "ui.libraries.wrong": "resultado errado (maior diferença {difference})",
    "ui.live.collective": "juntando-se aos outros ranks",
    "ui.live.done": "verificação concluída em {seconds} s",
    "ui.severity.error": "erro",
    "ui.severity.warning": "aviso",
    "ui.severity.info": "info",
    "ui.markdown.headline":
        "**{status}** `{code}` (código de saída {exit_code}), etapa `{stage}`: {summary}",
    "ui.markdown.title": "Relatório do kernodeck-diagnostic",
    "ui.markdown.field": "Campo",
    "ui.markdown.value": "Valor",

    # -- the command line's own messages ---------------------------------------------------------
    "command.usage_error": "erro: {message} (consulte --help)",
    "cli.timeout.not_a_number": "não é um número de segundos: {value}",
    "arg.timeout.range": "deve estar entre {low} e {high} segundos, valor recebido: {value}",
    "cli.index.not_a_number": "não é um número inteiro: {value}",
    "arg.index.negative": "deve ser maior ou igual a 0, valor recebido: {value}",
    "cli.contradiction": "{first} contradiz {second}: {reason}; dê só um dos dois",
    "arg.contradiction.all_devices.cpu":
        "todas as GPUs são verificadas, e o modo CPU não usa nenhuma",
    "arg.contradiction.all_devices.distributed":
        "cada rank verifica o dispositivo do seu próprio rank local, não todas as GPUs",
    "arg.contradiction.all_devices.device_index":
        "todas as GPUs são verificadas, não uma GPU escolhida",
    "arg.contradiction.distributed.device_index":
        "cada rank verifica o dispositivo do seu próprio rank local, não uma GPU escolhida",
    "arg.contradiction.cpu.device_index":
        "o modo CPU não usa GPU, então nenhum índice de GPU se aplica",
    "arg.contradiction.show_paths.format":
        "os caminhos aparecem só na saída em texto, nunca em JSON nem em markdown",
    "cli.device.rocm":
        "{value} não é um modo de dispositivo: os pacotes ROCm e CUDA do PyTorch usam ambos o "
        "nome de dispositivo 'cuda', então use --device gpu (o padrão)",
    "arg.device.unknown": "deve ser gpu ou cpu, valor recebido: {value}",
    "api.argument": "check({parameter}=...): {reason}",
    "api.contradiction": "check({first}, {second}): estes argumentos se contradizem: {reason}",
    "api.device.rocm":
        "{value} não é um modo de dispositivo: os pacotes ROCm e CUDA do PyTorch usam ambos o "
        "nome de dispositivo 'cuda', então use device='gpu' (o padrão)",
    "api.type.device": "check(device=...) recebe um str, 'gpu' ou 'cpu'; não {type}",
    "api.type.device_index": "check(device_index=...) recebe um int; não {type}",
    "api.type.progress": "check(progress=...) recebe uma função ou None; não {type}",
    "api.type.timeout": "check(timeout=...) recebe segundos como int ou float; não {type}",
    "api.type.host_check": "check(host_check=...) recebe True ou False; não {type}",
    "api.type.flag": "check({parameter}=...) recebe True ou False; não {type}",
    "api.type.all_devices": "check(all_devices=...) recebe True ou False; não {type}",
    "api.type.distributed": "check(distributed=...) recebe True ou False; não {type}",
    "api.type.python":
        "check(python=...) recebe o caminho do interpretador como str ou os.PathLike, ou None; "
        "não {type}",
    "arg.python.missing":
        "esse arquivo não existe; indique o caminho do interpretador (num ambiente "
        "virtual, bin/python, ou Scripts\\python.exe no Windows)",
    "arg.python.dangling":
        "é um link para um interpretador que não existe mais: o Python a partir do "
        "qual este ambiente virtual foi criado foi removido ou atualizado; crie o ambiente de "
        "novo",
    "arg.python.no_access":
        "esse interpretador existe, mas este usuário não consegue alcançá-lo: uma pasta no "
        "caminho está fechada para você (permissão negada; a pasta pessoal de outro usuário, "
        "por exemplo); peça ao dono que abra as pastas (chmod o+x em cada uma), ou use um "
        "Python seu",
    "arg.python.folder":
        "é uma pasta; indique o interpretador que ela contém (num ambiente virtual, "
        "bin/python, ou Scripts\\python.exe no Windows)",
    "arg.python.not_executable":
        "esse arquivo não é executável; indique o próprio interpretador (num ambiente "
        "virtual, bin/python)",
    "arg.python.not_runnable":
        "o sistema não consegue iniciar esse arquivo (um script cujo interpretador "
        "falta, ou um programa para outro sistema ou processador)",
    "arg.python.not_python":
        "esse programa não é um interpretador Python: ele rodou, mas não respondeu "
        "como um",
    "arg.python.too_old":
        "esse interpretador é Python {version}; o mínimo é {minimum}",
    "cli.distributed.no_launcher":
        "--distributed roda sob um lançador: torchrun (define {torchrun}) ou o srun do Slurm "
        "(define {slurm}); nenhuma dessas variáveis está definida",
    "cli.distributed.missing": "--distributed sob {launcher}: {names} não definida(s)",
    "cli.distributed.invalid": "--distributed: a variável {name} não tem um valor válido",
    "cli.distributed.rank_range":
        "--distributed: o rank {rank} não é menor que o tamanho "
        "{world_size}",
    "cli.distributed.ignored":
        "aviso: --distributed sob Slurm: {names} definida(s) sem as demais variáveis do "
        "torchrun (um export do script do job?): ignorada(s), as do próprio Slurm situam este rank",
    "cli.distributed.no_file":
        "o rank {rank} não grava arquivo: --output sem {placeholder} nomeia só o relatório do "
        "rank 0 (o do job); ponha {placeholder} no nome para um arquivo por rank",
    "cli.distributed.rank_verdict":
        "rank {rank} de {world_size}: {code} (saída {exit}); o relatório do job é o do rank 0",
    "cli.output.dash":
        "--output - criaria um arquivo chamado '-': para o relatório JSON na saída padrão use "
        "--format json; para um arquivo chamado '-' de fato escreva ./-",
    "cli.output.preflight":
        "não é possível gravar o relatório no arquivo solicitado: {reason}. Nada foi executado "
        "(código de saída {exit}).",
    "cli.output.not_saved":
        "o relatório NÃO foi salvo: {reason} (código de saída {exit}, OUTPUT_WRITE_FAILED).",
    "cli.stdout.saved":
        "o relatório foi salvo no arquivo solicitado, mas não pôde ser escrito na saída padrão: "
        "{reason} (código de saída {exit}, {code}).",
    "cli.stdout.lost":
        "o resultado não pôde ser escrito na saída padrão: {reason} (código de saída {exit}, "
        "{code}).",
    "output.reason.empty": "o nome do arquivo está vazio",
    "output.reason.exists_file": "já existe um arquivo com esse nome; ele nunca é sobrescrito",
    "output.reason.exists_link":
        "já existe um link simbólico com esse nome; ele nunca é sobrescrito",
    "output.reason.exists_folder": "já existe uma pasta com esse nome",
    "output.reason.exists_device":
        "esse nome é um dispositivo, não um arquivo comum; o relatório só é gravado em um "
        "arquivo novo",
    "output.reason.exists_fifo":
        "esse nome é um pipe nomeado (FIFO), não um arquivo comum; o relatório só é gravado em "
        "um arquivo novo",
    "output.reason.exists_socket":
        "esse nome é um socket, não um arquivo comum; o relatório só é gravado em um arquivo novo",
    "output.reason.no_working_folder":
        "a pasta de trabalho não existe mais, então um nome relativo não tem pasta; vá para uma "
        "pasta que exista ou dê o caminho completo",
    "output.reason.no_folder": "a pasta do arquivo não existe",
    "output.reason.pseudo_filesystem":
        "a pasta do arquivo está em {kind}, um sistema de arquivos do kernel "
        "que não guarda arquivos comuns",
    "output.reason.not_a_folder": "a pasta do arquivo não é uma pasta",
    "output.reason.not_writable": "a pasta do arquivo não permite escrita",
    "output.reason.name_too_long": "o nome do arquivo é longo demais",
    "output.reason.permission": "permissão negada",
    "output.reason.no_space": "não há espaço disponível no dispositivo",
    "output.reason.too_large":
        "o arquivo é maior do que o permitido (limite de tamanho de arquivo)",
    "output.reason.quota": "cota de disco excedida",
    "output.reason.read_only": "o sistema de arquivos é somente leitura",
    "output.reason.loop": "níveis demais de links simbólicos",
    "output.reason.nul":
        "o nome do arquivo contém um caractere NUL",
    "output.reason.trailing_separator":
        "o nome termina com um separador de pasta: indique um nome de arquivo",
    "output.reason.unencodable":
        "o nome do arquivo não pode ser codificado para este sistema de arquivos",
    "output.reason.no_folder_tilde":
        "a pasta dele não existe (um ~ no início não é a sua pasta pessoal aqui: o shell não o "
        "expandiu; escreva o caminho completo)",
    "output.reason.closed": "ela está fechada",
    "output.reason.other": "o sistema recusou a gravação ({detail})",
    "check.interrupted":
        "interrompido por {signal}; a verificação foi parada e nenhum relatório foi gravado.",
    # -- o --help da verificação (commands/check.py; mostrado em inglês, seja qual for o idioma) ---
    "check.help.description":
        "Encontra a primeira camada de uma instalação de PyTorch com GPU que falha: interpretador "
        "e import, backend do build, dispositivo, um pequeno cálculo verificado. Sem comando, "
        "{tool} roda esta verificação; um comando dado primeiro roda no lugar dela (cada um com "
        "seu --help).",
    "check.help.epilog.codes":
        "códigos de resultado: o código do relatório e o código de saída (nome, código de saída, "
        "significado):",
    "check.help.epilog.process":
        "códigos de saída só do processo, nunca o código de um relatório:",
    "check.help.epilog.output":
        "saída:\n"
        "  --output FILE é gravado primeiro, depois a saída padrão. Se a saída padrão estiver "
        "fechada ou\n"
        "  recusar os bytes (um dispositivo cheio), o código de saída é 15 (STDOUT_WRITE_FAILED) "
        "e o\n"
        "  arquivo solicitado ainda é salvo; um leitor que sai (| head) não é uma falha. Se o "
        "arquivo não\n"
        "  puder ser gravado, o código de saída é 12 (OUTPUT_WRITE_FAILED), e a primeira linha do "
        "texto\n"
        "  o diz. Os relatórios JSON e markdown mantêm o código e o código de saída da própria\n"
        "  verificação.\n"
        "  --output - é recusado (saída 2): o relatório JSON na saída padrão é --format json; um "
        "arquivo\n"
        "  chamado '-' de fato é ./-\n"
        "  Com TERM=dumb ou NO_COLOR, sem cores; com TERM=dumb a linha de progresso em stderr não "
        "usa\n"
        "  sequências de escape (apenas um retorno de carro e espaços).",
    "check.help.device": "onde rodar a verificação (padrão gpu; cpu só quando pedido)",
    "check.help.device_index": "índice da GPU entre os dispositivos visíveis (padrão 0)",
    "check.help.timeout":
        "limite para a verificação inteira, {low}-{high} segundos (padrão {default}; "
        "{kernels} com --kernels)",
    "check.help.output": "também grava o relatório JSON em FILE, que ainda não pode existir",
    "check.help.host_check":
        "também pergunta ao nvidia-smi (ou amd-smi, rocm-smi) o driver e a memória, 3 s no "
        "máximo",
    "check.help.distributed":
        "sob torchrun ou o srun do Slurm: verifica o dispositivo deste rank (seu rank local), "
        "depois uma coletiva (all-reduce, barrier) entre todos os ranks; o rank 0 mostra o "
        "relatório do job. --output pode conter {{rank}}: cada rank grava então o próprio "
        "relatório (veja docs/scale.md)",
    "check.help.all_devices":
        "verifica todas as GPUs visíveis numa só execução, cada uma com o próprio resultado, e "
        "uma cópia verificada entre cada par; o código é o da GPU de menor índice que falhou",
    "check.help.extensions":
        "também importa cada extensão do torch instalada (torchvision, flash-attn...), cada uma "
        "com limite, e verifica o torch que ela declara; uma falha é EXTENSION_FAILED (veja "
        "docs/libraries.md)",
    "check.help.kernels":
        "também verifica, no mesmo dispositivo, produtos de matrizes em float16/bfloat16/TF32, "
        "uma convolução, atenção, torch.compile e (GPU) uma cópia entre host e dispositivo; "
        "seu limite é 120 s, salvo outro --timeout",
    "check.help.python":
        "diagnostica outro interpretador (o de um kernel de notebook, de um serviço, de um venv) "
        "sem instalar nada nele",
    "check.help.format": "o que vai para a saída padrão (padrão text); --output é sempre JSON",
    "check.help.lang":
        "idioma do texto (padrão conforme LC_ALL, LC_MESSAGES, LANG); o JSON fica em inglês",
    "check.help.show_paths":
        "também mostra onde estão o interpretador e o torch, só neste terminal (nunca num "
        "relatório)",
    # -- todos os comandos (a verificação, compare, summarize) -----------------------------------
    "command.interrupted": "interrompido por {signal}.",
    "command.internal_error":
        "erro interno ({detail}); relate o problema informando o comando executado.",
    "command.help.debug": "mostra um traceback se a própria ferramenta falhar",

    # -- compare and summarize (reports read back; JSON output keeps ids, not these texts) -------
    "reports.reason.not_found": "não encontrado",
    "reports.reason.not_a_file": "não é um arquivo comum",
    "reports.reason.permission": "permissão negada",
    "reports.reason.unreadable": "não pode ser lido",
    "reports.reason.not_json": "não é JSON",
    "reports.reason.schema_version":
        "versão de esquema {version} (esta versão da ferramenta lê a versão 1)",
    "reports.reason.not_a_report": "não é um relatório",
    "reports.reason.too_large": "grande demais para ser um relatório (mais de {limit})",
    "reports.reason.link_not_followed":
        "um link para uma pasta, não seguido (o que ela contém não é lido)",
    "reports.help.format":
        "formato de saída: text (padrão), json ou markdown (para colar em uma issue)",
    "reports.help.lang": "idioma da saída em texto e markdown (padrão aqui: {default})",
    "compare.help.description":
        "Mostra o que mudou entre dois relatórios da verificação: código, etapa, versões, "
        "dispositivos, achados e tempos por etapa (um tempo conta quando mudou 100 ms e 20 por "
        "cento ou mais). O status de saída é o veredito: 0 o mesmo, 20 mudou, 21 uma regressão "
        "(algo que passava e falha, uma tentativa que não conclui mais, um contrato que falha ou "
        "sumiu); 2 quando um arquivo não é um relatório legível, 15 quando a saída padrão recusa "
        "o resultado. Duas tentativas do trial (suas pastas, arquivos attempt.json, ou uma pasta "
        "só com events.jsonl) são comparadas do mesmo modo, pelo status: parâmetros, versões, "
        "última etapa, primeiro erro, contratos, memória e tempo por etapa (a passada mais lenta "
        "nomeada).",
    "compare.help.a": "o relatório anterior (o JSON gravado com --output), ou a tentativa do trial",
    "compare.help.b": "o relatório posterior, ou a tentativa do trial",
    "compare.argument": "{which} ({name}): {reason}",
    "compare.cannot_read": "impossível comparar: {what}",
    "trial.adapter.framework_missing":
        "{name} não está instalado: este adaptador precisa de {name} {minimum} ou mais recente "
        "({install})",
    "trial.adapter.framework_too_old":
        "{name} {found} é antigo demais: este adaptador precisa de {name} {minimum} ou mais "
        "recente ({install})",
    "compare.same_code": "mesmo código: {code}",
    "compare.code_changed": "o código mudou: {a} -> {b}",
    "compare.same_status": "mesmo status: {code}",
    "compare.status_changed": "o status mudou: {a} -> {b}",
    "compare.mixed": "{a} é um relatório da verificação e {b} uma tentativa do trial: compare "
                     "dois do mesmo tipo",
    "compare.nothing_else": "nada mais mudou",
    "compare.header.field": "campo",
    "compare.findings_added": "achados novos em B: {ids}",
    "compare.findings_removed": "achados que sumiram em B: {ids}",
    "compare.regression":
        "regressão: {what}",
    "compare.regression.passed_to_failed":
        "A passou ({a}), B falhou ({b})",
    "compare.regression.passed_to":
        "A passou, B {b}: {why}",
    "compare.regression.stage_stopped":
        "etapa {stage}: {a} chamadas concluídas em A, {b} em B",
    "compare.regression.contract_failing":
        "o contrato {name} passou em A e falha em B",
    "compare.regression.contract_lost":
        "o contrato {name} passou em A e falta em B",
    "compare.regression.contract_new_failing":
        "o contrato {name} falha em B (não verificado em A)",
    "compare.last_started":
        "última etapa iniciada em {which}: {stage}",
    "compare.last_started_pass":
        "última etapa iniciada em {which}: {stage} (passada {index})",
    "summarize.help.description":
        "Resume muitos relatórios da verificação, por exemplo coletados em várias máquinas: "
        "primeiro os jobs dos relatórios de --distributed (o veredito do job, o de cada rank, os "
        "ranks que nunca reportaram), uma linha por relatório, depois a contagem de cada código, "
        "do pior ao melhor, e por fim os arquivos que não são relatórios legíveis, com o motivo.",
    "summarize.help.paths": "um arquivo de relatório, ou uma pasta percorrida em busca de *.json",
    "summarize.help.epilog": "Ordem dos códigos, do pior ao melhor: {order}.",
    "summarize.header.report": "relatório",
    "summarize.header.code": "código",
    "summarize.header.exit": "saída",
    "summarize.header.stage": "etapa",
    "summarize.header.python": "python",
    "summarize.header.torch": "torch",
    "summarize.header.backend": "backend",
    "summarize.header.devices": "dispositivos",
    "summarize.header.count": "quantidade",
    "summarize.counts": "contagem por código, do pior ao melhor",
    "summarize.unreadable": "ilegíveis ({count})",
    "summarize.jobs": "jobs: o veredito do job, depois o de cada rank",
    "summarize.job": "job {job} ({launcher}, {world_size} rank(s)): {status}, {code}",
    "summarize.job.run": "{job}, execução {run} de {runs}",
    "summarize.job.passed": "passou",
    "summarize.job.failed": "falhou",
    "summarize.job.incomplete": "incompleto",
    "summarize.job.never_reported": "nunca reportaram: rank(s) {ranks}",
    "summarize.job.world_sizes": "os relatórios discordam do número de ranks (world size): {sizes}",
    "summarize.header.rank": "rank",
    "summarize.header.node": "nó",
    "summarize.job.in_rank_0": "no relatório do rank 0",
    "summarize.job.no_report": "nunca reportou",
    "summarize.job.stopped": "{file} (parado pelo lançador)",
    "summarize.every_device":
        "dispositivos de --all-devices: o veredito de cada relatório, depois o de cada "
        "dispositivo e o das cópias",
    "summarize.every_device.copies": "cópias",
    "summarize.header.device": "dispositivo",
    "summarize.header.step": "passo",
    "summarize.unreadable.line": "ilegíveis: {count} arquivo(s), {kinds}",
    "summarize.unreadable.hint": "(--list-unreadable os lista)",
    "summarize.help.list_unreadable":
        "listar cada arquivo que não é um relatório legível, com o motivo (por padrão: uma linha "
        "com a contagem e os tipos)",
    "summarize.total":
        "{files} arquivo(s): {reports} relatório(s), {passed} aprovado(s), {failed} com falha, "
        "{unreadable} ilegível(is)",
    "summarize.attempts":
        "tentativas do trial e do ramp",
    "summarize.attempts_total":
        "{attempts} tentativa(s): {passed} passaram, {failed} falharam, {ramp} de um ramp (não "
        "contadas)",
    "summarize.header.attempt":
        "tentativa",
    "summarize.header.status":
        "status",
    "summarize.header.error_stage":
        "etapa do primeiro erro",
    "summarize.header.contracts":
        "contratos",
    "summarize.header.peak":
        "pico de memória",
    "summarize.header.last_started":
        "última etapa iniciada",
    "summarize.help.only":
        "mostrar só os relatórios que falharam, todos, um por linha (para scripts)",
    "summarize.help.part":
        "estes relatórios são uma parte de uma frota (xargs): os ranks ausentes de um job podem "
        "estar em outra parte (inconclusivo, não incompleto)",
    "summarize.help.prometheus":
        "escrever também as contagens como métricas Prometheus em FILE (*.prom, substituído "
        "atomicamente)",
    "summarize.prometheus_suffix":
        "--prometheus: o nome do arquivo deve terminar em .prom (o node_exporter só lê esses)",
    "summarize.stdin_twice":
        "- (a entrada padrão) só pode ser dado uma vez",
    "summarize.job.in_part":
        "parcial (seus outros ranks podem estar em outra parte)",
    "summarize.job.not_among":
        "ausentes destes relatórios: rank(s) {ranks}",
    "summarize.job.stop.time_limit":
        "parados pelo lançador, limite de tempo Slurm do job: rank(s) {ranks} (não é falha deles)",
    "summarize.job.stop.cancelled":
        "parados pelo lançador, job cancelado (scancel): rank(s) {ranks} (não é falha deles)",
    "summarize.job.stop.sigterm":
        "parados pelo lançador (SIGTERM): rank(s) {ranks} (não é falha deles)",
    "summarize.fleet.groups":
        "relatórios que falharam por código, etapa e causa (os {few} primeiros de cada um "
        "nomeados)",
    "summarize.fleet.group":
        "{code}  {stage}  {cause}: {count}",
    "summarize.fleet.more":
        "… e mais {count} (--only failed lista todos)",
    "summarize.fleet.more_groups":
        "… e mais {groups} grupo(s), {count} relatório(s)",
    "summarize.fleet.jobs":
        "jobs: {jobs}, {passed} aprovado(s); os que não passaram:",
    "summarize.fleet.jobs_all_passed":
        "jobs: {jobs}, todos aprovados",
    "summarize.fleet.rank":
        "rank {rank}: {code} ({file})",
    "summarize.fleet.more_jobs":
        "… e mais {count} job(s) que não passaram (--format json)",
    "summarize.fleet.every_device":
        "relatórios --all-devices que não passaram: {count}",
    "summarize.nothing_found": "nenhum arquivo para ler nos caminhos indicados",
    # -- ramp (docs/operating-range.md); os resultados ficam ids (passed, out_of_memory...) ----
    "ramp.help.description":
        "Aumenta um único eixo da sua aplicação (batch, comprimento, concorrência, processos) até "
        "a falha, um processo por tentativa, e registra a faixa de operação medida: ramp.json, "
        "ramp.md e, com matplotlib, ramp.png em --out. Dê o comando da aplicação depois de --; "
        "{{NAME}} nele é substituído pelo valor.",
    "ramp.help.epilog":
        "Cada tentativa recebe também KERNODECK_AXIS_NAME, KERNODECK_AXIS_VALUE e "
        "KERNODECK_RUN_DIR (onde um Trial põe sua pasta de tentativa). Execute o mesmo comando com "
        "o mesmo --out para retomar: tentativas registradas nunca são refeitas. Quando a saída "
        "padrão está fechada ou recusa o resultado, o registro fica em --out mesmo assim.",
    "ramp.help.axis": "o nome do eixo, como o marcador {{NAME}} do comando",
    "ramp.help.start": "o primeiro valor (um inteiro, no mínimo 1)",
    "ramp.help.stop": "o maior valor a tentar",
    "ramp.help.factor": "fator de crescimento entre dois valores (padrão 2)",
    "ramp.help.bisect":
        "após a primeira falha, bissecta entre o último sucesso e ela, até a resolução inteira",
    "ramp.help.attempt_timeout": "tempo limite de uma tentativa, em segundos (padrão 600)",
    "ramp.help.out": "pasta dos arquivos da rampa (padrão runs/ramp-NAME); a mesma retoma",
    "ramp.no_command": "dê o comando da aplicação depois de -- (ex.: -- python app.py)",
    "ramp.bad_axis": "--axis {axis}: um nome de letras, dígitos e _ (ex.: batch)",
    "ramp.bad_range": "--start {start} --stop {stop}: é preciso 1 <= start <= stop",
    "ramp.bad_factor": "--factor {factor}: deve ser maior que 1",
    "ramp.bad_timeout": "--attempt-timeout {timeout}: deve ser um número positivo de segundos",
    "ramp.bad_out": "--out não pode conter a rampa: {reason}",
    "ramp.other_ramp":
        "--out contém uma rampa com outros parâmetros ({settings}); escolha outro --out, ou "
        "execute o mesmo comando para retomá-la",
    "ramp.resuming":
        "retomando: {count} tentativa(s) já registrada(s) em ramp.json não são refeitas",
    "ramp.progress": "[{index}] {axis}={value}: {outcome} em {duration} s, pico de memória {peak}",
    "ramp.header.value": "{axis}",
    "ramp.header.outcome": "resultado",
    "ramp.header.duration": "duração",
    "ramp.header.peak": "pico de memória",
    "ramp.header.detail": "detalhe",
    "ramp.range":
        "{axis}: {passed} passaram{between}; último sucesso {last}, primeira falha {first} "
        "({kind})",
    "ramp.all_passed":
        "{axis}: {passed} passaram{between}; nenhuma falha até {value} (nenhum limite encontrado)",
    "ramp.none_passed": "{axis}: o primeiro valor, {value}, já falhou ({kind})",
    "ramp.written": "escritos na pasta --out: {files}",
    "ramp.no_plot":
        "sem gráfico: matplotlib não está instalado no Python que roda este comando (instale-o "
        "nele: python -m pip install matplotlib, com esse Python)",
    "ramp.plot.duration": "duração (s)",
    "ramp.plot.memory": "pico de memória (MiB)",
    "ramp.interrupted":
        "interrompido por {signal}; a tentativa em curso foi parada, ramp.json mantido: execute "
        "o mesmo comando de novo para retomar.",
    # -- resume-check ------------------------------------------------------------------------------
    "resume.help.description":
        "Executa sua aplicação, para-a quando o registro tem N registros (ou após S segundos), "
        "executa-a de novo até o fim e verifica o registro: cada id esperado exatamente uma vez, "
        "cada linha um registro inteiro, cada registro o que deve ser. Ou verifica um registro tal "
        "como está (--verify-ledger). Sai com 0 só quando uma retomada foi provada e nada está "
        "perdido, duplicado ou ruim.",
    "resume.help.ledger": "o registro de saídas da aplicação (JSON Lines; não deve existir ainda)",
    "resume.help.stop_after_records":
        "para a primeira execução quando o registro tiver N registros",
    "resume.help.stop_after": "para a primeira execução após tantos segundos",
    "resume.help.expect_ids":
        "arquivo dos ids esperados, um por linha (padrão: expected_ids do cabeçalho do registro)",
    "resume.help.grace":
        "segundos entre SIGINT e SIGTERM, e entre SIGTERM e SIGKILL (padrão 10)",
    "resume.help.timeout":
        "limite de tempo de cada execução, e da verificação dos registros, em segundos (padrão "
        "3600)",
    "resume.not_positive": "{option} deve ser um número positivo",
    "resume.ledger_exists":
        "o registro já existe: a verificação começa de um registro vazio (mova-o)",
    "resume.unsafe_ledger": "--ledger não pode ser usado: {reason}",
    "files.unsafe.link":
        "um link simbólico de outro usuário está no caminho (recusado, nunca seguido)",
    "files.unsafe.owner": "a pasta pertence a outro usuário",
    "files.unsafe.writable": "outros usuários podem escrever na pasta e ela não tem o sticky bit",
    "files.unsafe.not_folder": "não é uma pasta",
    "files.unsafe.not_file": "não é um arquivo comum",
    "files.unsafe.file_owner": "o arquivo pertence a outro usuário",
    "files.unsafe.hard_link": "o arquivo tem outros links físicos",
    "resume.bad_expect_ids": "--expect-ids não pode ser lido: {reason}",
    "resume.first_run":
        "primeira execução parada com {records} registro(s) no arquivo ({remaining} id(s) "
        "esperado(s) restante(s)); executando de novo",
    "resume.not_stopped":
        "a primeira execução terminou sozinha (saída {exit}) antes da parada; executando de novo",
    "resume.intact": "RETOMADA OK: nada perdido, nada contado duas vezes",
    "resume.not_intact": "RETOMADA FALHOU (saída {exit}, {code})",
    "resume.second_failed": "a segunda execução não terminou bem (saída {exit}): {error}",
    "resume.expected": "{count} id(s) esperado(s)",
    "resume.lost": "perdidos ({count}): {ids}",
    "resume.duplicated": "duplicados ({count}): {ids}",
    "resume.unexpected": "não esperados ({count}): {ids}",
    "resume.half_records": "registros pela metade ({count}) na(s) linha(s): {lines}",
    "code.SUMMARY_ALL_PASSED.summary":
        "Todos os relatórios foram aprovados e todos os arquivos foram lidos.",
    "code.SUMMARY_ALL_PASSED.next_action": "Nada a fazer.",
    "code.SUMMARY_SOME_FAILED.summary":
        "Um relatório falhou, um job está incompleto, ou um arquivo não é um relatório legível.",
    "code.SUMMARY_SOME_FAILED.next_action":
        "Leia os relatórios com falha e os ranks dos jobs que nunca reportaram; "
        "--list-unreadable indica os arquivos ilegíveis.",
    "code.SUMMARY_NOTHING_READ.summary":
        "Nenhum relatório legível foi encontrado nos caminhos dados.",
    "code.SUMMARY_NOTHING_READ.next_action":
        "Verifique os caminhos: arquivos de relatório, ou pastas que os contêm.",
    "code.RAMP_RANGE_MEASURED.summary":
        "Pelo menos um valor passou: a faixa de operação foi medida.",
    "code.RAMP_RANGE_MEASURED.next_action": "Fique abaixo da primeira falha (ramp.md).",
    "code.RAMP_NOTHING_PASSED.summary":
        "Até o primeiro valor falhou: uma falha do próprio programa.",
    "code.RAMP_NOTHING_PASSED.next_action":
        "Comece mais baixo, ou leia o stderr.txt da primeira tentativa.",
    "code.RAMP_INCONCLUSIVE.summary":
        "Nada foi medido: nenhuma tentativa executou o programa, o eixo não mudou nada, ou o "
        "primeiro valor que não passou foi inconclusivo.",
    "code.RAMP_INCONCLUSIVE.next_action":
        "Verifique o comando após -- e que o programa usa o valor (os parâmetros do seu Trial).",
    "code.RESUME_INTACT.summary":
        "Parado com trabalho restante e retomado: cada id esperado uma vez, cada registro inteiro "
        "e válido.",
    "code.RESUME_INTACT.next_action": "Nada a fazer.",
    "code.RESUME_RECORDS_LOST.summary": "Ids esperados não têm registro após a retomada.",
    "code.RESUME_RECORDS_LOST.next_action":
        "Torne cada registro durável antes de contá-lo como feito (OutputLedger).",
    "code.RESUME_RECORDS_DUPLICATED.summary":
        "Ids foram gravados mais de uma vez, ou refeitos: gravados de novo pela segunda execução "
        "embora o registro os tivesse na parada.",
    "code.RESUME_RECORDS_DUPLICATED.next_action":
        "Pule os ids já presentes no registro quando o programa inicia (done_ids).",
    "code.RESUME_BAD_RECORD.summary":
        "Uma linha não é um registro inteiro, ou um registro viola suas regras (dimensão, valores "
        "finitos, --record-check), ou seu id nunca era esperado.",
    "code.RESUME_BAD_RECORD.next_action": "Veja as linhas e os ids indicados.",
    "code.RESUME_INCONCLUSIVE.summary":
        "Nada foi provado: não parado com trabalho restante, uma segunda execução sem nada a "
        "fazer, ou nenhum id esperado.",
    "code.RESUME_INCONCLUSIVE.next_action":
        "Pare-o mais cedo, dê-lhe mais trabalho, ou informe os ids esperados.",
    "code.RESUME_RUN_FAILED.summary":
        "Uma execução do programa falhou por outro motivo (seu código de saída, o limite de "
        "tempo).",
    "code.RESUME_RUN_FAILED.next_action": "Leia a última linha de erro da execução indicada.",
    "code.HEALTH_PASSED.summary": "Cada GPU deste nó passou na verificação.",
    "code.HEALTH_PASSED.next_action": "Nada a fazer.",
    "code.HEALTH_NODE_FAULT.summary":
        "Uma GPU deste nó ou o seu driver falhou na verificação: inutilizável, um resultado "
        "errado, um erro do backend.",
    "code.HEALTH_NODE_FAULT.next_action":
        "Retire o nó de serviço (--slurm faz isso) e verifique a GPU indicada.",
    "code.HEALTH_ENVIRONMENT_FAULT.summary":
        "O software falhou, não o nó: PyTorch ausente, quebrado ou sem backend de GPU, ou os "
        "dispositivos ocultados por uma configuração.",
    "code.HEALTH_ENVIRONMENT_FAULT.next_action":
        "Corrija a imagem ou o venv da verificação; não retire o nó por isso.",
    "code.HEALTH_INCONCLUSIVE.summary":
        "Nada foi provado sobre o nó: o tempo limite (um nó ocupado), memória ocupada por um "
        "job, ou uma verificação terminada sem resultado.",
    "code.HEALTH_INCONCLUSIVE.next_action":
        "Execute de novo quando o nó estiver livre; não retire o nó por isso.",
    "cli.command.health-check":
        "as GPUs de um nó verificadas para Slurm, NHC ou node-problem-detector",
    "health.help.description":
        "A verificação de cada GPU deste nó, para o controle de saúde de um nó: de quem é a "
        "falha (do nó, do ambiente, ou nada provado), uma linha de motivo, um código de saída "
        "que o hospedeiro entende e, com --slurm, o nó retirado ou devolvido ao serviço.",
    "health.help.epilog":
        "Perfis de saída: native (os códigos abaixo), npd (node-problem-detector: 0 OK, 1 um "
        "problema, 2 desconhecido), prolog (um prólogo do Slurm ou NHC: 1 só para a falha do "
        "próprio nó, senão 0, para que um bug da ferramenta nunca retire um nó).",
    "health.help.timeout": "segundos que toda a verificação pode levar, 5-120 (padrão {default})",
    "health.help.python": "o interpretador a verificar (padrão: este)",
    "health.help.output": "escrever também o relatório JSON da verificação neste novo arquivo",
    "health.help.prometheus":
        "escrever o veredito como métricas do Prometheus neste arquivo *.prom (substituído "
        "atomicamente)",
    "health.help.slurm":
        "retirar este nó por falha própria, devolvê-lo após um sucesso só se este comando o "
        "retirou",
    "health.help.node":
        "o nome do nó no Slurm (padrão: SLURMD_NODENAME, senão o nome curto do host)",
    "health.help.exit_profile": "os códigos de saída: native, npd ou prolog (ver abaixo)",
    "health.help.format": "text (padrão) ou json (um objeto)",
    "health.timeout_range": "--timeout deve estar entre {low} e {high} segundos",
    "metrics.suffix":
        "--prometheus: o coletor textfile do node_exporter só lê arquivos terminados em "
        "{suffix}",
    "metrics.not_saved": "{what} não foi salvo: {reason}",
    "health.fault.passed": "SAUDÁVEL",
    "health.fault.node": "FALHA DO NÓ",
    "health.fault.environment": "AMBIENTE",
    "health.fault.inconclusive": "INCONCLUSIVO",
    "health.next.node": "a GPU ou o seu driver falhou: retire o nó e verifique a GPU indicada",
    "health.next.environment":
        "o software falhou, não o nó: corrija a imagem ou o venv; o nó não é retirado",
    "health.next.inconclusive": "nada provado sobre o nó: execute de novo quando estiver livre",
    "health.slurm.drained": "nó retirado de serviço com esse motivo",
    "health.slurm.already_drained": "já retirado com esse motivo: deixado como está",
    "health.slurm.resumed": "nó devolvido ao serviço (este comando o tinha retirado)",
    "health.slurm.left_operator_drain":
        "o nó está retirado por outro motivo (de um operador): deixado como está",
    "health.slurm.not_drained": "não retirado: não é falha do nó",
    "health.slurm.nothing": "nada a fazer",
    "health.slurm.unknown_node": "o scontrol não conhece este nó: nada feito (--node NOME)",
    "health.slurm.scontrol_failed": "scontrol update falhou: nada feito",
    "health.passed": "{code}: {count} GPU(s) verificada(s)",
    "check.help.prometheus":
        "também grava o veredito como métricas do Prometheus em FILE (*.prom, substituído "
        "atomicamente)",
    "command.help.statuses": "códigos de saída (nome, código de saída, significado):",
    "command.help.process_statuses": "como o processo terminou de outra forma:",
    "check.help.epilog.commands": "comandos (o primeiro argumento; nenhum executa a verificação):",
    "cli.command.check":
        "a verificação: a primeira camada de uma instalação de PyTorch com GPU que falha",
    "cli.command.compare": "o que mudou entre dois relatórios, ou duas tentativas de trial",
    "cli.command.summarize":
        "muitos relatórios de uma vez: uma linha cada, a contagem de cada código",
    "cli.command.ramp": "a faixa de operação do seu programa: um eixo aumentado até falhar",
    "cli.command.resume-check":
        "para o seu programa, roda-o de novo: nenhuma saída perdida ou gravada duas vezes",
    "cli.unknown_command":
        "comando desconhecido {word}: os comandos são {commands}, ou nenhum para a verificação",
    "cli.unknown_command.near": "comando desconhecido {word}: você quis dizer {command}?",
    "ramp.help.value_from_env":
        "o programa lê seu valor de KERNODECK_AXIS_VALUE: o comando não precisa conter {{NAME}}",
    "ramp.no_placeholder":
        "o comando nunca contém {placeholder}, então toda tentativa executaria o mesmo "
        "comando{found}; ponha {placeholder} onde o valor vai, ou use --value-from-env se o "
        "programa lê KERNODECK_AXIS_VALUE",
    "ramp.placeholder_found": " (ele tem {found})",
    "ramp.never_started": "{axis}: o programa nunca foi iniciado ({error}): nada foi medido",
    # Issue 41: one judge; what a ramp measured, said whole.
    "ramp.between_not_tried":
        " (os valores intermediários não foram testados)",
    "ramp.no_single_limit":
        "{axis}: nenhum limite único: {failed} falharam abaixo de um valor que passou ({passed} "
        "passaram){between}",
    "ramp.flaky":
        "{axis}: instável: {values} passaram e falharam; nenhum limite pode ser dado",
    "ramp.axis_ignored":
        "{axis}: {why}; nada foi medido",
    "ramp.inconclusive_at":
        "{axis}: {passed} passaram; em {value}, inconclusivo ({why}): limite desconhecido",
    "ramp.unfinished":
        "{axis}: a rampa não chegou ao fim; {passed} passaram até agora",
    "ramp.program_changed":
        "os arquivos do programa mudaram desde que o ramp.json de --out foi escrito ({files}): "
        "suas tentativas estariam obsoletas; escolha outro --out, ou remova ramp.json para "
        "recomeçar",
    "ramp.help.repeat":
        "executar o último valor que passou e o primeiro que falhou N vezes no total (padrão "
        "1): um valor que passou e falhou é instável",
    "ramp.bad_repeat":
        "--repeat {repeat}: dê um número de 1 a 100",
    "code.RAMP_NO_SINGLE_LIMIT.summary":
        "Um valor falhou abaixo de um valor que passou: não há limite único.",
    "code.RAMP_NO_SINGLE_LIMIT.next_action":
        "Leia as pastas das tentativas que falharam: a falha depende de mais do que o eixo.",
    "code.RAMP_FLAKY.summary":
        "Um valor passou e falhou (--repeat): o limite é instável.",
    "code.RAMP_FLAKY.next_action":
        "Execute de novo os valores instáveis, e fique bem abaixo deles.",
    "code.SUMMARY_INCONCLUSIVE.summary":
        "Nada falhou, mas uma tentativa ou uma rampa não pôde ser julgada (não chegou ao fim, "
        "ou nada foi medido).",
    "code.SUMMARY_INCONCLUSIVE.next_action":
        "Leia as linhas inconclusivas: execute-as de novo até o fim.",
    "summarize.inconclusive":
        "{count} tentativa(s) ou rampa(s) inconclusiva(s): nenhuma prova de sucesso",
    "resume.help.verify_ledger":
        "verifica este registro tal como está (um job parado de verdade), sem executar nada",
    "resume.help.stop_signal":
        "como a primeira execução é parada: SIGKILL de imediato, como uma preempção ou o OOM "
        "killer (o padrão: uma parada brusca prova que o que o programa contava como feito estava "
        "no disco); SIGINT como Ctrl-C, depois SIGTERM, depois SIGKILL, com --grace entre eles; "
        "ou SIGTERM, depois SIGKILL",
    "resume.help.record_check":
        "uma função importada da pasta atual (como python -m), chamada como FUNCTION(record_id, "
        "record) em cada registro: um registro falha quando ela levanta uma exceção ou retorna "
        "False",
    "resume.run_only": "{option} é para uma execução do programa, não para --verify-ledger",
    "resume.verify_no_command": "--verify-ledger não executa nada: não dê comando após --",
    "resume.no_stop":
        "dê --stop-after-records N ou --stop-after SECONDS: quando parar a primeira execução",
    "resume.bad_record_check_spec":
        "--record-check {spec}: dê MODULE:FUNCTION (por exemplo checks:unit_norm)",
    "resume.bad_record_check": "--record-check {spec} não pode ser usado: {reason}",
    "resume.bad_verify_ledger": "--verify-ledger não pode ser lido: {reason}",
    "resume.ledger_preflight":
        "não é possível usar o registro solicitado: {reason}. Nada foi executado (código de saída "
        "{exit}).",
    "resume.inconclusive_head": "RETOMADA INCONCLUSIVA (saída {exit}, {code})",
    "resume.first_failed": "a primeira execução falhou antes de ser parada (saída {exit}): {error}",
    "resume.inconclusive.no_expected_ids":
        "nenhum id esperado (dê --expect-ids, ou expected_ids ao OutputLedger): ids perdidos não "
        "podem ser verificados",
    "resume.inconclusive.never_stopped":
        "a primeira execução terminou sozinha antes da parada: nada foi retomado (pare-a mais "
        "cedo)",
    "resume.inconclusive.stopped_before_any_record":
        "a primeira execução foi parada antes de gravar qualquer registro: não havia nada a "
        "pular, então nenhuma retomada foi exercitada (pare-a mais tarde)",
    "resume.inconclusive.first_run_finished":
        "a primeira execução já tinha terminado seu trabalho quando acabou: {records} "
        "registro(s), nenhum id esperado restante; nada foi retomado (pare-a mais cedo, ou "
        "dê-lhe mais trabalho)",
    "resume.inconclusive.second_run_idle":
        "a segunda execução terminou bem sem gravar nenhum registro: nenhuma retomada foi "
        "exercitada",
    "resume.inconclusive.record_check_unfinished":
        "a verificação dos registros não terminou ({error}): os registros que ela não viu não "
        "foram verificados",
    "resume.misplaced_header":
        "o cabeçalho do registro está na linha {line}, não na linha 1: seus ids esperados não são "
        "usados",
    "resume.not_records": "não são registros ({count}) na(s) linha(s): {lines}",
    "resume.not_record.binary": "bytes binários, não texto UTF-8",
    "resume.not_record.not_json": "texto que não é JSON",
    "resume.not_record.no_id": "JSON sem id",
    "resume.bad_records": "registros ruins ({count}): {ids}",
    "resume.intact_after_stop":
        "RETOMADA OK após uma parada por {signal}: nada perdido, nada refeito, nada contado duas "
        "vezes",
    "resume.stopped_by":
        "a primeira execução foi parada por {signal} com {records} registro(s) no registro "
        "({remaining} id(s) esperado(s) restante(s))",
    "resume.first_time_limit":
        "a primeira execução foi encerrada pelo seu limite de tempo ({timeout} s, --timeout) "
        "antes da parada",
    "resume.second_time_limit":
        "a segunda execução foi encerrada pelo seu limite de tempo ({timeout} s, --timeout): "
        "travou (um lock antigo, uma espera sem fim) ou precisa de mais tempo",
    "resume.refused_duplicate":
        "o registro recusou um id que já tinha: o programa não pula os ids de done_ids() ao "
        "iniciar",
    "resume.rewrote":
        "a segunda execução não manteve o registro como a parada o deixou (truncado ou "
        "substituído): recomeçou tudo em vez de retomar",
    "resume.redone":
        "refeitos ({count}): no registro na parada, gravados de novo pela segunda execução: {ids}",
    "resume.gentle_stop":
        "{signal} é uma parada suave: o programa pôde gravar o que ainda guardava; prove a "
        "retomada também após uma parada brusca (--stop-signal SIGKILL, o padrão)",
    "resume.no_record_check":
        "só as linhas do registro foram verificadas: quando cada id tem sua própria saída (um "
        "arquivo gravado após append), verifique-a com --record-check MODULE:FUNCTION "
        "(examples/resume_record_check.py)",
    # -- the tool's own needs (issue 44: supervision/tool_needs.py) -----------------------------
    "code.TOOL_RESOURCES.summary":
        "A ferramenta não obteve o que precisa dos limites deste processo (arquivos abertos, "
        "processos, memória): nada é concluído sobre a máquina.",
    "code.TOOL_RESOURCES.next_action":
        "Aumente o limite que o erro nomeia, como ele diz, e rode a verificação de novo.",
    "error.tool_needs.open_files":
        "a ferramenta ficou sem arquivos abertos durante {at}: este processo pode abrir {limit} "
        "(ulimit -n), menos do que ela precisa; rode `ulimit -n {suggested}` antes, depois "
        "verifique de novo",
    "error.tool_needs.open_files_system":
        "a ferramenta ficou sem arquivos abertos durante {at}: a tabela de arquivos abertos do "
        "sistema está cheia (fs.file-max); feche programas ou aumente-a, depois verifique de novo",
    "error.tool_needs.processes":
        "o sistema recusou à ferramenta um processo ou uma thread durante {at}: o limite de "
        "processos (ulimit -u, pids.max de um cgroup) foi atingido; permita pelo menos "
        "{suggested} a mais (`ulimit -u`, pids.max), depois verifique de novo",
    "error.tool_needs.memory":
        "o worker foi morto pelo OOM killer do kernel durante {at}: o cgroup de memória da "
        "verificação permite {limit} MB (memory.max), que torch e a ferramenta juntos excederam; "
        "dê-lhe pelo menos {suggested} MB (--memory de um contêiner, --mem do Slurm), depois "
        "verifique de novo",
    "error.tool_needs.memory_unknown":
        "o worker foi morto pelo OOM killer do kernel durante {at}: um cgroup de memória da "
        "verificação contou a morte; dê-lhe pelo menos {suggested} MB (--memory de um contêiner, "
        "--mem do Slurm), depois verifique de novo",
}
