"""French messages: the same keys and placeholders as the English catalog (en.py)."""

from __future__ import annotations

INSTALL = ("python -m pip install --force-reinstall {torch} --index-url "
           "https://download.pytorch.org/whl/cu128 (NVIDIA ; choisissez la version CUDA prise en "
           "charge par votre pilote), --index-url https://download.pytorch.org/whl/rocm6.4 "
           "(AMD) ou --index-url https://download.pytorch.org/whl/xpu (Intel)")

MESSAGES = {
    # -- result codes ----------------------------------------------------------------------------
    "code.GPU_CHECK_PASSED.summary": "Produit et gradient vérifiés sur le GPU choisi.",
    "code.GPU_CHECK_PASSED.next_action": "Passez à une petite entrée de votre application.",
    "code.CPU_CHECK_PASSED.summary": "Produit et gradient vérifiés sur le CPU uniquement.",
    "code.CPU_CHECK_PASSED.next_action":
        "Ne concluez rien sur CUDA ou ROCm : lancez sans --device cpu pour vérifier le GPU.",
    "notebook.next_action.cpu_passed_other":
        "Ne concluez rien sur CUDA ou ROCm : appelez de nouveau check() avec le même python= et "
        'device="gpu" pour vérifier le GPU.',
    "notebook.next_action.cpu_passed":
        'Ne concluez rien sur CUDA ou ROCm : lancez check(device="gpu") pour vérifier le GPU.',
    "notebook.finding.NUMPY_MISSING.next_action": "%pip install numpy",
    "notebook.restart_kernel":
        "Puis redémarrez le noyau (Kernel > Restart) : il garde les modules qu'il a "
        "importés, un mauvais torch compris.",
    "code.INTERNAL_ERROR.summary": "Le diagnostic lui-même a échoué (un bogue de l'outil).",
    "code.INTERNAL_ERROR.next_action": "Signalez-le en indiquant la commande exécutée.",
    "code.USAGE_ERROR.summary": "Arguments invalides.",
    "code.USAGE_ERROR.next_action": "Lisez le message d'une ligne, puis consultez --help.",
    "code.TORCH_MISSING.summary": "PyTorch n'est pas installé dans ce Python.",
    "code.TORCH_MISSING.next_action":
        "Vérifiez quel interpréteur exécute votre projet, puis installez-y PyTorch.",
    "code.TORCH_IMPORT_FAILED.summary": "import torch a échoué.",
    "code.TORCH_IMPORT_FAILED.next_action":
        "Vérifiez l'interpréteur, le paquet PyTorch et ses dépendances.",
    "code.GPU_BACKEND_ABSENT.summary":
        "Ce paquet PyTorch ne déclare aucun backend GPU : ni CUDA, ni HIP, ni XPU, ni MPS (un "
        "paquet CPU uniquement).",
    "code.GPU_BACKEND_ABSENT.next_action":
        "Installez le paquet PyTorch adapté à votre GPU (CUDA, ROCm ou XPU ; sur un Mac, le "
        "paquet standard a MPS).",
    "code.GPU_UNAVAILABLE.summary": "Le GPU n'est pas utilisable depuis ce processus.",
    "code.GPU_UNAVAILABLE.next_action":
        "Vérifiez l'exposition de la carte à ce processus, le pilote et les permissions.",
    "code.DEVICE_INDEX_INVALID.summary":
        "L'index de périphérique est en dehors des périphériques visibles.",
    "code.DEVICE_INDEX_INVALID.next_action":
        "Demandez un index inférieur au nombre de périphériques visibles.",
    "code.CHECK_FAILED.summary": "Le calcul fixe a donné un résultat faux.",
    "code.CHECK_FAILED.next_action": "Lisez l'étape signalée avant de lancer le modèle complet.",
    "code.OUT_OF_MEMORY.summary":
        "L'allocation sur le périphérique a échoué : mémoire insuffisante.",
    "code.OUT_OF_MEMORY.next_action":
        "Lisez l'étape signalée et les constats ; si aucun ne nomme une cause, vérifiez ce "
        "qui occupe d'autre de la mémoire sur ce périphérique.",
    "code.RUNTIME_ERROR.summary": "Une opération du backend a échoué.",
    "code.RUNTIME_ERROR.next_action":
        "Lisez l'étape signalée et l'erreur avant de lancer le modèle complet.",
    "code.TIMEOUT.summary": "La vérification a été arrêtée par la limite de temps.",
    "code.TIMEOUT.next_action":
        "Traitez le contrôle comme un échec ; examinez l'environnement à l'étape indiquée.",
    "code.WORKER_FAILED.summary": "La vérification s'est terminée sans rapport exploitable.",
    "code.WORKER_FAILED.next_action":
        "Traitez le contrôle comme un échec ; examinez l'environnement à l'étape indiquée.",
    "code.COLLECTIVE_FAILED.summary":
        "La vérification de ce rang a réussi, mais le job n'est pas sain : un rang a échoué ou "
        "n'a pas répondu, ou l'opération collective a échoué, expiré ou donné une somme fausse.",
    "code.COLLECTIVE_FAILED.next_action":
        "Voyez les rangs nommés dans le bloc distributed : vérifiez d'abord chaque rang en échec "
        "ou absent sur son propre nœud.",
    "code.EXTENSION_FAILED.summary":
        "Une extension de torch n'a pas pu être importée (ou son import s'est bloqué) ; torch "
        "lui-même a réussi.",
    "code.EXTENSION_FAILED.next_action":
        "Voir l'extension nommée dans l'erreur et le constat : le plus souvent elle a été "
        "compilée pour un autre torch ou une autre CUDA ; installez les deux depuis le même index, "
        "épinglés ensemble.",
    "code.OUTPUT_WRITE_FAILED.summary": "Le rapport n'a pas été enregistré à l'endroit demandé.",
    "code.OUTPUT_WRITE_FAILED.next_action":
        "Utilisez un nouveau nom de fichier dans un dossier où vous pouvez écrire.",
    "code.STDOUT_WRITE_FAILED.summary":
        "Le résultat n'a pas pu être écrit sur la sortie standard.",
    "code.STDOUT_WRITE_FAILED.next_action":
        "Envoyez la sortie standard vers un terminal, un tube ou un fichier qui a de la place ; "
        "gardez le rapport avec --output.",
    "code.INTERRUPTED.summary":
        "Arrêté par un signal : Ctrl-C (SIGINT), SIGTERM ou SIGHUP (le terminal a été fermé).",
    "code.INTERRUPTED.next_action": "Relancez-la le moment venu.",

    # -- findings ---------------------------------------------------------------------------------
    "code.COMPARE_SAME.summary":
        "Le même verdict (code ou statut, contrats, première erreur) ; d'autres faits "
        "peuvent différer, listés",
    "code.COMPARE_SAME.next_action":
        "Lisez les faits listés comme changés, s'il y en a.",
    "code.COMPARE_CHANGED.summary":
        "Le verdict a changé, sans régression (un échec corrigé, un échec pour un autre)",
    "code.COMPARE_CHANGED.next_action":
        "Lisez la première ligne et les faits qui ont changé.",
    "code.COMPARE_REGRESSION.summary":
        "Une régression (ce qui passait échoue, une tentative qui n'aboutit plus, un "
        "contrat qui échoue ou a disparu), nommée sous la première ligne",
    "code.COMPARE_REGRESSION.next_action":
        "Lisez les lignes de régression, puis la première erreur et les contrats de B.",
    "finding.CPU_ONLY_BUILD.summary":
        "Le PyTorch installé est un paquet CPU uniquement : il ne peut utiliser aucun GPU.",
    "finding.CPU_ONLY_BUILD.next_action":
        "Installez un paquet GPU dans cet interpréteur : " + INSTALL + ".",
    "finding.CPU_ONLY_BUILD.macos.summary":
        "Le PyTorch installé est un paquet CPU uniquement : il ne peut pas utiliser le GPU de "
        "ce Mac (MPS).",
    "finding.CPU_ONLY_BUILD.macos.next_action":
        "Installez le paquet macOS standard dans cet interpréteur (python -m pip install "
        "--force-reinstall {torch}), qui inclut MPS, depuis un Python arm64 natif.",
    "finding.MPS_UNAVAILABLE.rosetta.summary":
        "Ce PyTorch a MPS, mais ce Python s'exécute en x86_64 (sous Rosetta 2 sur un Mac Apple "
        "silicon), où MPS n'est pas disponible.",
    "finding.MPS_UNAVAILABLE.rosetta.next_action":
        "Installez un Python arm64 natif (l'installateur universel de python.org, un conda arm64 "
        "ou Homebrew dans /opt/homebrew), puis PyTorch dedans : python -m pip install torch.",
    "finding.MPS_UNAVAILABLE.macos_too_old.summary":
        "Ce PyTorch a MPS, mais macOS {version} est trop ancien pour lui : MPS exige macOS 12.3 "
        "ou plus récent, PyTorch 2.5 et suivants macOS 13, les dernières versions macOS 14.",
    "finding.MPS_UNAVAILABLE.macos_too_old.next_action":
        "Mettez macOS à jour (14 ou plus récent), ou installez un PyTorch plus ancien qui prend "
        "en charge macOS {version}.",
    "finding.MPS_UNAVAILABLE.no_device.summary":
        "Ce PyTorch a MPS, mais aucun GPU Metal utilisable n'est visible (une machine virtuelle, "
        "un exécuteur de CI ou une session distante sans accès au GPU, ou un Mac Intel).",
    "finding.MPS_UNAVAILABLE.no_device.next_action":
        "Exécutez sur le Mac lui-même avec Apple silicon, hors machine virtuelle ; vérifiez que "
        "python -c \"import torch; print(torch.backends.mps.is_available())\" affiche True.",
    "finding.NVIDIA_DRIVER_MISSING.summary":
        "Aucun pilote NVIDIA n'est accessible depuis ce processus (aucun n'est installé, ou le "
        "conteneur a été démarré sans le runtime GPU).",
    "finding.NVIDIA_DRIVER_MISSING.next_action":
        "Sur un hôte : installez le pilote NVIDIA (nvidia-smi doit fonctionner). Dans un "
        "conteneur : démarrez-le avec le runtime GPU, par exemple docker run --gpus all (NVIDIA "
        "Container Toolkit).",
    "finding.BUILD_FOR_OTHER_VENDOR.amd.summary":
        "Ce PyTorch est un paquet CUDA, pour les GPU NVIDIA, mais le GPU de cette machine est un "
        "AMD : le paquet ne peut pas l'utiliser.",
    "finding.BUILD_FOR_OTHER_VENDOR.amd.next_action":
        "Installez un paquet ROCm pour le GPU AMD : python -m pip install --force-reinstall "
        "{torch} --index-url https://download.pytorch.org/whl/rocm6.4 (choisissez la version "
        "ROCm prise en charge par votre pilote).",
    "finding.BUILD_FOR_OTHER_VENDOR.nvidia.summary":
        "Ce PyTorch est un paquet ROCm, pour les GPU AMD, mais le GPU de cette machine est un "
        "NVIDIA : le paquet ne peut pas l'utiliser.",
    "finding.BUILD_FOR_OTHER_VENDOR.nvidia.next_action":
        "Installez un paquet CUDA pour le GPU NVIDIA : python -m pip install --force-reinstall "
        "{torch} --index-url https://download.pytorch.org/whl/cu128 (choisissez la version CUDA "
        "prise en charge par votre pilote).",
    "finding.DRIVER_TOO_OLD.summary":
        "Le pilote NVIDIA est trop ancien pour ce paquet PyTorch (CUDA {build}).",
    "finding.DRIVER_TOO_OLD.next_action":
        "Mettez à jour le pilote (au moins {minimum} sous Linux pour CUDA {major}.x), ou "
        "installez un paquet torch pour la version de CUDA que le pilote prend en charge, par "
        "exemple --index-url https://download.pytorch.org/whl/cu126.",
    "finding.DRIVER_TOO_OLD.forward_compat.summary":
        "Le pilote NVIDIA ({driver}) est plus ancien que ce qu'exige CUDA {major}.x ({minimum}), "
        "et il a pourtant exécuté ce paquet CUDA {build} : un paquet de compatibilité ascendante "
        "de CUDA (cuda-compat, comme dans les conteneurs NGC) est utilisé.",
    "finding.DRIVER_TOO_OLD.forward_compat.next_action":
        "Rien à corriger pour cette vérification. La compatibilité ascendante ne fonctionne que "
        "sur les GPU de centre de données (et quelques cartes RTX certifiées et cartes Jetson), et "
        "seulement avec le paquet cuda-compat qui correspond au paquet torch ; pour s'en passer, "
        "mettez à jour le pilote (au moins {minimum}).",
    "finding.ARCH_NOT_IN_BUILD.summary":
        "Ce paquet PyTorch ne contient pas de code pour l'architecture de ce GPU.",
    "finding.ARCH_NOT_IN_BUILD.next_action":
        "Installez un paquet dont torch.cuda.get_arch_list() contient le sm_XY de ce GPU (les GPU "
        "récents exigent des paquets CUDA récents, par exemple --index-url "
        "https://download.pytorch.org/whl/cu128 pour Blackwell), ou compilez PyTorch avec "
        "TORCH_CUDA_ARCH_LIST défini pour ce GPU.",
    "finding.ARCH_PTX_ONLY.summary":
        "Ce GPU n'exécute PyTorch que par du PTX compilé à la volée : les premiers appels sont "
        "lents.",
    "finding.ARCH_PTX_ONLY.next_action":
        "Installez un paquet avec du code natif (sm_XY) pour ce GPU ; en attendant, conservez le "
        "cache JIT (CUDA_CACHE_MAXSIZE, ~/.nv/ComputeCache) entre les exécutions.",
    "finding.DEVICES_HIDDEN.summary":
        "Une variable de visibilité des périphériques masque tous les GPU à ce processus.",
    "finding.DEVICES_HIDDEN.next_action":
        "Supprimez-la (unset {variable}) ou listez les GPU à utiliser, par exemple {variable}=0.",
    "finding.FABRIC_MANAGER_NOT_READY.summary":
        "Les GPU ne sont pas prêts : sur les systèmes NVSwitch, le Fabric Manager n'est pas en "
        "cours d'exécution (CUDA 802).",
    "finding.FABRIC_MANAGER_NOT_READY.next_action":
        "Démarrez-le, dans la version exacte du pilote : sudo systemctl enable --now "
        "nvidia-fabricmanager ; puis vérifiez systemctl status nvidia-fabricmanager.",
    "finding.DRIVER_LIBRARY_MISMATCH.summary":
        "Le pilote du noyau et la bibliothèque du pilote en espace utilisateur (libcuda) ont des "
        "versions différentes (CUDA 803).",
    "finding.DRIVER_LIBRARY_MISMATCH.next_action":
        "Redémarrez après une mise à jour du pilote, ou réinstallez le pilote pour que les deux "
        "correspondent ; dans un conteneur, n'incluez pas libcuda dans l'image (laissez le "
        "runtime GPU monter celle de l'hôte).",
    "finding.FORWARD_COMPAT_UNSUPPORTED.summary":
        "Une bibliothèque CUDA de compatibilité future (forward compatibility) est utilisée sur "
        "un GPU qui ne la prend pas en charge (CUDA 804).",
    "finding.FORWARD_COMPAT_UNSUPPORTED.next_action":
        "Retirez les bibliothèques cuda-compat de LD_LIBRARY_PATH (ou de l'image), ou mettez à "
        "jour le pilote pour qu'il prenne directement en charge le CUDA de ce paquet.",
    "finding.CUDA_UNKNOWN_ERROR.summary":
        "Le pilote CUDA signale une erreur inconnue (999), souvent après une mise en veille "
        "suivie d'une reprise.",
    "finding.CUDA_UNKNOWN_ERROR.next_action":
        "Rechargez le module de mémoire unifiée (sudo rmmod nvidia_uvm && sudo modprobe "
        "nvidia_uvm) ou redémarrez ; puis relancez la vérification.",
    "finding.MIG_SLICE.summary":
        "Une partition MIG est utilisée : elle dispose d'une fraction de la mémoire et de la "
        "puissance de calcul du GPU.",
    "finding.MIG_SLICE.next_action":
        "Dimensionnez votre travail pour la partition, pas pour la carte entière ; pour cibler "
        "une partition, mettez dans CUDA_VISIBLE_DEVICES son UUID donné par nvidia-smi -L.",
    "finding.NUMPY_MISSING.summary":
        "NumPy n'est pas installé à côté de torch : tensor.numpy() et la plupart des chargements "
        "de données échoueront.",
    "finding.NUMPY_MISSING.next_action": "python -m pip install numpy (avec le même interpréteur).",
    "finding.NUMPY_ABI_MISMATCH.summary":
        "La version de NumPy ne correspond pas à celle avec laquelle ce torch (ou une extension) "
        "a été compilé.",
    "finding.NUMPY_ABI_MISMATCH.next_action":
        'python -m pip install "numpy<2" pour un paquet compilé avec NumPy 1.x, ou mettez à '
        "jour torch et l'extension vers des paquets conçus pour NumPy 2.",
    "finding.WARNING_AS_ERROR.summary":
        "Les filtres d'avertissements de l'interpréteur changent les avertissements en erreurs, "
        "et un {category} a arrêté la vérification : votre programme échoue de la même façon "
        "lancé ainsi.",
    "finding.WARNING_AS_ERROR.next_action":
        "Retirez -W error (ou PYTHONWARNINGS=error) pour ce programme, ou laissez passer cet "
        "avertissement avec un filtre ignore placé après : -W error -W ignore::{category} "
        "(PYTHONWARNINGS=error,ignore::{category}), en nommant son module si possible.",
    "finding.TRACEMALLOC_ON.summary":
        "Le tracemalloc de Python est actif dans cet interpréteur ({frames} trame(s) par "
        "allocation) : il enregistre chaque allocation, ce qui rend l'import de torch bien plus "
        "lent (2,3 s devenues 27 s avec 5 trames pour un build CUDA sur une machine de test).",
    "finding.TRACEMALLOC_ON.next_action":
        "Retirez PYTHONTRACEMALLOC (et -X tracemalloc), sauf si vous tracez la mémoire exprès ; "
        "dans ce cas, donnez plus de temps à la vérification (--timeout 120).",
    "finding.CALLER_TORCH_DIFFERS.kernel.summary":
        "Ce noyau exécute torch {loaded}, importé avant la vérification, qui n'est pas ce que "
        "'import torch' trouve maintenant : le verdict vaut pour le prochain démarrage du noyau.",
    "finding.CALLER_TORCH_DIFFERS.kernel.next_action":
        "Redémarrez le noyau (Kernel > Restart), puis relancez la vérification avant d'importer "
        "torch : un noyau garde le torch qu'il a importé en premier.",
    "finding.CALLER_TORCH_DIFFERS.program.summary":
        "Ce programme exécute torch {loaded}, importé avant la vérification, qui n'est pas ce "
        "que 'import torch' trouve maintenant : le verdict vaut pour le prochain démarrage du "
        "programme.",
    "finding.CALLER_TORCH_DIFFERS.program.next_action":
        "Relancez le programme : un processus garde le torch qu'il a importé en premier.",
    "finding.TORCH_SHADOWED.local_file.summary":
        "'import torch' chargerait {module} au lieu d'un paquet PyTorch installé.",
    "finding.TORCH_SHADOWED.local_file.next_action":
        "Renommez {module} (par exemple un script à vous en torch_demo.py) ou sortez-le de ce "
        "dossier, et supprimez le dossier __pycache__ à côté ; ou lancez votre programme depuis "
        "un autre dossier.",
    "finding.TORCH_SHADOWED.local_folder.summary":
        "'import torch' chargerait le dossier {module} au lieu d'un paquet PyTorch installé.",
    "finding.TORCH_SHADOWED.local_folder.next_action":
        "Renommez le dossier {module} (ou déplacez-le), ou lancez votre programme depuis un autre "
        "dossier.",
    "finding.TORCH_SHADOWED.checkout.summary":
        "'import torch' chargerait le dossier torch/ d'une copie des sources de PyTorch, non "
        "compilée ici, au lieu d'un paquet PyTorch installé.",
    "finding.TORCH_SHADOWED.checkout.next_action":
        "Lancez votre programme depuis un autre dossier (cd ..), ou compilez et installez ces "
        "sources dans cet interpréteur (python -m pip install -e . -v --no-build-isolation).",
    "finding.TORCH_SHADOWED.pythonpath_checkout.summary":
        "'import torch' chargerait le dossier torch/ de sources de PyTorch non compilées ici, "
        "trouvé par un dossier de PYTHONPATH, au lieu d'un paquet PyTorch installé.",
    "finding.TORCH_SHADOWED.pythonpath_checkout.next_action":
        "Retirez le dossier de ces sources de PYTHONPATH (unset PYTHONPATH s'il ne contient "
        "rien d'autre d'utile) ; changer de dossier n'y fait rien, PYTHONPATH est cherché de "
        "partout. Pour utiliser ces sources, compilez-les et installez-les dans cet "
        "interpréteur (python -m pip install -e . -v --no-build-isolation, dans leur dossier).",
    "finding.TORCH_SHADOWED.pythonpath.summary":
        "'import torch' chargerait {module} depuis un dossier de PYTHONPATH au lieu d'un paquet "
        "PyTorch installé.",
    "finding.TORCH_SHADOWED.pythonpath.next_action":
        "Retirez ce dossier de PYTHONPATH (ou supprimez PYTHONPATH), ou renommez-y {module} ; "
        "--show-paths affiche où il se trouve, sur votre terminal seulement.",
    "finding.TORCH_SHADOWED.stray.summary":
        "'import torch' chargerait {module}, une copie égarée, au lieu d'un paquet PyTorch "
        "installé.",
    "finding.TORCH_SHADOWED.pythonpath_build.summary":
        "torch {loaded} est chargé depuis un dossier de PYTHONPATH au lieu du torch {installed} "
        "de cet environnement, qu'il masque : la vérification a jugé {loaded}.",
    "finding.TORCH_SHADOWED.pythonpath_build.next_action":
        "Retirez ce dossier de PYTHONPATH (unset PYTHONPATH s'il ne contient rien d'autre dont "
        "vous avez besoin) ; le torch {installed} de l'environnement est alors celui importé. "
        "Réinstaller torch n'aiderait pas : pip modifie celui qui est masqué. --show-paths "
        "affiche le dossier, sur votre terminal seulement.",
    "finding.TORCH_SHADOWED.other_build.summary":
        "torch {loaded} est chargé depuis une copie qui n'est pas le torch {installed} installé "
        "dans cet environnement, qu'elle masque : la vérification a jugé {loaded}.",
    "finding.TORCH_SHADOWED.other_build.next_action":
        "Supprimez ou renommez cette copie de torch (--show-paths affiche où elle se trouve, sur "
        "votre terminal seulement) pour que le torch {installed} installé soit importé ; "
        "réinstaller torch n'aiderait pas, pip modifie celui qui est masqué.",
    "finding.TORCH_PARTIAL_INSTALL.package_gone.summary":
        "Une désinstallation inachevée : les métadonnées de torch {version} sont installées mais "
        "son paquet a disparu, si bien que pip répond à une installation simple par "
        "\"Requirement already satisfied\".",
    "finding.TORCH_PARTIAL_INSTALL.package_gone.next_action":
        "Réinstallez cette version par-dessus ce qui reste, avec cet interpréteur : {reinstall}.",
    "finding.TORCH_PARTIAL_INSTALL.metadata_gone.summary":
        "torch {version} est dans cet environnement sans ses métadonnées (une désinstallation "
        "inachevée, ou un paquet copié) : pip ne le voit pas et peut installer une autre copie "
        "par-dessus.",
    "finding.TORCH_PARTIAL_INSTALL.metadata_gone.next_action":
        "Réinstallez cette version, avec cet interpréteur, pour que pip la connaisse : "
        "{reinstall}.",
    "finding.TORCH_PARTIAL_INSTALL.damaged.summary":
        "Le torch {version} installé est endommagé : 'import torch' exécute ses propres "
        "fichiers, qui ne donnent pas torch.__version__ (un fichier vidé ou tronqué) ; c'est "
        "une installation de PyTorch, abîmée.",
    "finding.TORCH_PARTIAL_INSTALL.damaged.next_action":
        "Réinstallez cette version par-dessus, avec cet interpréteur : {reinstall}.",
    "finding.TORCH_PARTIAL_INSTALL.library_damaged.summary":
        "Le torch {version} installé est endommagé : {files} (une bibliothèque compilée "
        "tronquée ou écrasée, par une copie ou un téléchargement interrompu, ou un disque "
        "plein) ; la charger tue 'import torch' ou le fait échouer.",
    "finding.TORCH_PARTIAL_INSTALL.library_damaged.next_action":
        "Réinstallez cette version par-dessus, avec cet interpréteur : {reinstall}.",
    "finding.LOCAL_MODULE_SHADOWS.breaks_import.summary":
        "import torch a échoué dans {module} : votre propre {file}, que Python importe en "
        "premier, à la place du {module} dont torch a besoin (vos modules qui en cachent "
        "d'autres : {names}).",
    "finding.LOCAL_MODULE_SHADOWS.breaks_import.next_action":
        "Renommez {file} (et supprimez le dossier __pycache__ à côté), puis relancez la "
        "vérification : torch importera alors son propre {module}.",
    "finding.SHM_TOO_SMALL.absent.summary":
        "Il n'y a pas de dossier de mémoire partagée /dev/shm : les workers du DataLoader "
        "(num_workers > 0), torch.multiprocessing et NCCL ne peuvent pas partager de mémoire "
        "entre processus.",
    "finding.SHM_TOO_SMALL.absent.next_action":
        "Montez-en un, en root : mkdir -p /dev/shm && mount -t tmpfs -o size=8g tmpfs /dev/shm "
        "(un conteneur : docker run --ipc=host ou --shm-size=8g ; Kubernetes : un emptyDir en "
        "mémoire sur /dev/shm).",
    "finding.TORCH_BACKEND_PLUGIN_FAILED.summary":
        "import torch a échoué dans le greffon de périphérique {plugin}, que torch charge en "
        "s'important (groupe de points d'entrée torch.backends) : {cause}.",
    "finding.TORCH_BACKEND_PLUGIN_FAILED.next_action":
        "Donnez au greffon ce qu'il lui faut (le runtime de son périphérique, ci-dessus), ou, "
        "si vous n'utilisez pas ce périphérique, retirez-le (python -m pip uninstall "
        "{distribution}) ; TORCH_DEVICE_BACKEND_AUTOLOAD=0 python app.py confirme que torch "
        "fonctionne sans lui.",
    "finding.PYTHONHOME_SET.summary":
        "PYTHONHOME est défini : l'interpréteur vérifié cherche sa bibliothèque standard dans ce "
        "dossier, n'y trouve pas la sienne et ne peut pas démarrer. Sa valeur n'est pas montrée "
        "ici.",
    "finding.PYTHONHOME_SET.next_action":
        "Retirez-le (env -u PYTHONHOME python app.py, ou unset PYTHONHOME dans le shell, le "
        "script du job ou le module qui le définit) et relancez la vérification : le Python d'un "
        "venv n'en a jamais besoin.",
    "finding.TORCH_LOGS_INVALID.summary":
        "TORCH_LOGS contient un nom que torch ne connaît pas (une faute de frappe, ou celui "
        "d'une autre version) : import torch le refuse. Sa valeur n'est pas montrée ici.",
    "finding.TORCH_LOGS_INVALID.next_action":
        "Retirez-la (env -u TORCH_LOGS python app.py), ou corrigez-la : TORCH_LOGS=help python "
        "-c 'import torch' liste les noms que ce torch accepte (dynamo, inductor, "
        "graph_breaks...).",
    "finding.TORCH_ON_NOEXEC_MOUNT.summary":
        "torch est installé sur un système de fichiers monté noexec : le chargeur ne peut pas y "
        "projeter ses bibliothèques, donc import torch échoue, aussi intactes soient-elles.",
    "finding.TORCH_ON_NOEXEC_MOUNT.next_action":
        "Placez l'environnement sur un système de fichiers qui permet l'exécution (un dossier "
        "personnel ou de projet, pas un /tmp ou un scratch noexec), ou faites-le remonter avec "
        "exec (en root : mount -o remount,exec sur ce point de montage) ; findmnt -T sur le "
        "dossier de torch montre le montage.",
    "finding.TORCH_FILES_UNREADABLE.summary":
        "import torch ne peut pas lire {file}, un fichier du torch installé : permission "
        "refusée à cet utilisateur (installé par un autre avec un umask fermé, ou son mode "
        "changé).",
    "finding.TORCH_FILES_UNREADABLE.next_action":
        "Faites-le ouvrir à tous par le propriétaire de l'installation (ou root), avec le python "
        "de cet environnement : chmod -R a+rX {folder}.",
    "finding.TORCH_PATH_NOT_UTF8.summary":
        "Le chemin du dossier où torch est installé n'est pas en UTF-8 (un dossier nommé dans "
        "un autre encodage) : torch l'encode en UTF-8 en s'important, et échoue.",
    "finding.TORCH_PATH_NOT_UTF8.next_action":
        "Renommez ce dossier avec un nom UTF-8 (convmv -f latin1 -t utf8 convertit de tels "
        "noms), ou recréez l'environnement sous un chemin UTF-8.",
    "finding.TORCH_FOR_OTHER_PYTHON.other_tag.summary":
        "La partie compilée de torch est faite pour un autre Python ({built}), pas pour cet "
        "interpréteur ({own}) : installée avec le pip d'un autre Python.",
    "finding.TORCH_FOR_OTHER_PYTHON.other_tag.next_action":
        "Réinstallez torch avec le pip de cet interpréteur (le Python qui exécute votre "
        "projet) : {reinstall}.",
    "finding.TORCH_FOR_OTHER_PYTHON.no_extension.summary":
        "torch n'a pas de partie compilée pour cet interpréteur ({own}) : torch/_C manque, et "
        "son message sur une copie des sources induit en erreur.",
    "finding.TORCH_FOR_OTHER_PYTHON.no_extension.next_action":
        "Réinstallez torch avec le pip de cet interpréteur (le Python qui exécute votre "
        "projet) : {reinstall}.",
    "finding.TORCH_FOR_OTHER_PYTHON.pythonpath.summary":
        "torch vient d'un dossier de PYTHONPATH et sa partie compilée n'est pas construite pour "
        "cet interpréteur ({own} ; torch/_C y a : {built}) : ce dossier contient les paquets "
        "d'un autre Python.",
    "finding.TORCH_FOR_OTHER_PYTHON.pythonpath.next_action":
        "Retirez ce dossier de PYTHONPATH (unset PYTHONPATH s'il ne contient rien d'autre "
        "d'utile ; un 'module load' le définit souvent) : cet interpréteur importe alors son "
        "propre torch, ou dit qu'il n'en a pas. Réinstaller torch n'y ferait rien : pip "
        "installe dans cet environnement, que PYTHONPATH précède.",
    "finding.WORKING_FOLDER_MISSING.summary":
        "Le dossier où la vérification a été lancée n'existe plus (supprimé ou renommé entre-"
        "temps) : le chargeur de torch échoue à cause de lui, quoi qu'il soit installé.",
    "finding.WORKING_FOLDER_MISSING.next_action":
        "Placez-vous dans un dossier qui existe (cd ~, ou cd de retour dans votre projet), puis "
        "relancez votre programme et la vérification ; rien n'est à réinstaller.",
    "finding.TORCH_SHADOWED.stray.next_action":
        "Supprimez {module} égaré (--show-paths affiche où il se trouve, sur votre terminal "
        "seulement), puis réinstallez PyTorch : {reinstall}.",
    "finding.LOCAL_MODULE_SHADOWS.summary":
        "Des modules des dossiers où votre programme cherche d'abord (le dossier de travail et "
        "celui du script appelant) masquent des modules dont il a besoin : {names}.",
    "finding.LOCAL_MODULE_SHADOWS.next_action":
        "Renommez-les (et supprimez le dossier __pycache__ à côté) : votre programme les importe "
        "au lieu de ceux de la bibliothèque standard ou de torch.",
    "finding.LOCAL_MODULE_SHADOWS.working_folder.summary":
        "Des modules du dossier de travail, où un programme lancé ici cherche d'abord, masquent "
        "des modules dont il a besoin : {names}.",
    "finding.LOCAL_MODULE_SHADOWS.working_folder.next_action":
        "Renommez-les (et supprimez le dossier __pycache__ à côté), ou lancez votre programme "
        "depuis un autre dossier : python app.py y importe ceux-là au lieu de ceux de la "
        "bibliothèque standard ou de torch.",
    "finding.LOCAL_MODULE_SHADOWS.script_folder.summary":
        "Des modules du dossier du script qui a appelé la vérification, où Python cherche "
        "d'abord pour ce script, masquent des modules dont il a besoin : {names}.",
    "finding.LOCAL_MODULE_SHADOWS.script_folder.next_action":
        "Renommez-les (et supprimez le dossier __pycache__ à côté), ou placez votre script dans "
        "un dossier à lui : Python les importe pour lui, d'où qu'il soit lancé, au lieu de ceux "
        "de la bibliothèque standard ou de torch.",
    "finding.PYTHONPATH_MODULE_BREAKS_IMPORT.summary":
        "import torch a échoué dans {module}, chargé depuis un dossier du PYTHONPATH : Python le "
        "parcourt avant les paquets de cet environnement, donc cette copie a remplacé celle "
        "installée avec torch.",
    "finding.PYTHONPATH_MODULE_BREAKS_IMPORT.next_action":
        "Relancez la vérification sans lui (env -u PYTHONPATH, ou python -E) ; si elle passe, "
        "retirez ce dossier du PYTHONPATH (le 'module load' d'un système de modules ou un profil "
        "du shell le fait souvent pointer vers les paquets d'un autre Python).",
    "finding.TORCH_DUPLICATE_INSTALL.summary":
        "Plusieurs installations de PyTorch sont visibles pour cet interpréteur ; celle qui est "
        "importée n'est peut-être pas celle que vous avez installée.",
    "finding.TORCH_DUPLICATE_INSTALL.next_action":
        "Lancez python -m pip uninstall torch jusqu'à ce que pip dise que torch n'est pas installé "
        "(chaque passage retire la première installation du chemin, celle du site-packages de "
        "l'utilisateur aussi ; une copie que pip ne touche pas, sur PYTHONPATH par exemple, s'en "
        "va quand on retire son dossier du chemin), puis installez un seul paquet.",
    "finding.TORCH_HIDDEN_BY_SETTING.no_site.summary":
        "torch est installé dans le site-packages de cet interpréteur, mais python -S retire ce "
        "dossier du chemin d'import : pip, lancé sans -S, dit que torch est installé.",
    "finding.TORCH_HIDDEN_BY_SETTING.no_site.next_action":
        "Lancez Python sans -S (retirez-le de la commande ou de la ligne #! du script) ; "
        "réinstaller torch n'y ferait rien.",
    "finding.TORCH_HIDDEN_BY_SETTING.user_site_variable.summary":
        "torch est installé dans votre site-packages utilisateur (pip install --user), mais "
        "PYTHONNOUSERSITE retire ce dossier du chemin d'import (pip, lancé avec, ne le voit pas "
        "non plus et installerait une seconde copie).",
    "finding.TORCH_HIDDEN_BY_SETTING.user_site_variable.next_action":
        "unset PYTHONNOUSERSITE (ou retirez-le là où il est défini : script de tâche, fichier "
        "de module, profil du shell) ; réinstaller torch n'y ferait rien.",
    "finding.TORCH_HIDDEN_BY_SETTING.user_site_flag.summary":
        "torch est installé dans votre site-packages utilisateur (pip install --user), mais "
        "python {setting} retire ce dossier du chemin d'import : pip dit que torch est "
        "installé.",
    "finding.TORCH_HIDDEN_BY_SETTING.user_site_flag.next_action":
        "Lancez Python sans {setting} (retirez-le de la commande ou de la ligne #! du script), "
        "ou installez torch là où cet interpréteur cherche (un environnement virtuel) ; le "
        "réinstaller tel quel n'y ferait rien.",
    "finding.TORCH_ORPHAN_METADATA.summary":
        "Le dossier {orphan} à côté de torch est la métadonnée d'une installation dont les "
        "fichiers ont disparu (une mise à jour interrompue) : pip le compte comme torch et ne "
        "peut pas le retirer (\"No files were found to uninstall\", à chaque fois).",
    "finding.TORCH_ORPHAN_METADATA.next_action":
        "Supprimez ce dossier avec le Python de votre projet : rm -r \"$(python -c 'import os, "
        "torch; print(os.path.dirname(os.path.dirname(torch.__file__)))')/{orphan}\" (sous "
        "Windows, supprimez le dossier {orphan} à côté du dossier torch) ; le torch installé "
        "n'est pas touché.",
    "finding.SHARED_LIBRARY_MISSING.driver.summary":
        "import torch a besoin de {library}, une bibliothèque du pilote NVIDIA, qui est "
        "introuvable.",
    "finding.SHARED_LIBRARY_MISSING.driver.next_action":
        "{library} est fournie par le pilote NVIDIA, jamais par un paquet Python (réinstaller "
        "torch ne la ramène pas) : sur un hôte, installez le pilote (nvidia-smi doit fonctionner) "
        "; dans un conteneur, démarrez-le avec le runtime GPU (docker run --gpus all, NVIDIA "
        "Container Toolkit), qui monte les bibliothèques du pilote de l'hôte.",
    "finding.SHARED_LIBRARY_MISSING.cuda.summary":
        "import torch a besoin de {library}, qui est introuvable.",
    "finding.SHARED_LIBRARY_MISSING.cuda.next_action":
        "Restaurez {library} : elle est fournie par les wheels nvidia-* dont dépend torch : "
        "{reinstall}. Vérifiez aussi que LD_LIBRARY_PATH ne "
        "pointe pas ailleurs.",
    "finding.SHARED_LIBRARY_MISSING.system.summary":
        "import torch a besoin de {library}, qui est introuvable.",
    "finding.SHARED_LIBRARY_MISSING.system.next_action":
        "Restaurez {library} : réinstallez torch ({reinstall}) ; si la bibliothèque appartient "
        "au système, installez-la avec le gestionnaire de paquets du système. Vérifiez aussi "
        "que LD_LIBRARY_PATH ne pointe pas ailleurs.",
    "finding.UNDEFINED_SYMBOL.summary":
        "{library} ne correspond pas au code qui la charge (symbole non défini {symbol}) : deux "
        "paquets différents sont mélangés.",
    "finding.UNDEFINED_SYMBOL.next_action":
        "Retirez la variable LD_LIBRARY_PATH (elle pointe souvent vers un autre CUDA ou cuDNN), "
        "puis réinstallez torch et ses extensions depuis un seul index.",
    "finding.LIBRARY_PATH_OVERRIDE.variable.summary":
        "Un dossier de {variable} fournit une {library} que ce torch ne peut pas charger "
        "(mauvaise version, fichier vide ou abîmé, ou fait pour une autre architecture).",
    "finding.LIBRARY_PATH_OVERRIDE.variable.next_action":
        "Retirez {variable} pour ce programme, ou ôtez-en ce dossier ; env -u {variable} "
        "python app.py le confirme.",
    "finding.LIBRARY_PATH_OVERRIDE.conda.summary":
        "Le dossier lib de l'environnement conda (l'actif, ou celui du Python vérifié) fournit "
        "une {library} que ce torch ne peut pas charger (souvent une libstdc++ plus ancienne "
        "que celle dont torch a besoin).",
    "finding.LIBRARY_PATH_OVERRIDE.conda.next_action":
        "Mettez cette bibliothèque à jour dans l'environnement (pour libstdc++ : conda install -c "
        "conda-forge libstdcxx-ng), ou lancez le programme depuis un environnement dont les "
        "bibliothèques vont avec torch.",
    "finding.LIBRARY_PATH_OVERRIDE.torch_library.summary":
        "Un dossier de {variable} contient {library}, une des bibliothèques de torch lui-même "
        "(une libtorch C++, par exemple) : le chargeur la prend avant la copie de torch, donc "
        "import torch mélange deux builds et échoue.",
    "finding.LIBRARY_PATH_OVERRIDE.torch_library.next_action":
        "Retirez ce dossier de {variable} pour les programmes Python (env -u {variable} python "
        "app.py le confirme) ; ne le définissez que pour le programme C++ qui a besoin de cette "
        "libtorch. Réinstaller torch n'y ferait rien.",
    "finding.LIBRARY_PATH_OVERRIDE.torch_library_loaded.summary":
        "{library}, une bibliothèque de torch lui-même, a été chargée hors du dossier lib/ de "
        "torch (une libtorch C++ dans {variable}, par exemple) : deux builds partagent ce "
        "processus, ce qui ne marche que tant qu'ils sont identiques.",
    "finding.LIBRARY_PATH_OVERRIDE.torch_library_loaded.next_action":
        "Retirez ce dossier de {variable} pour les programmes Python (env -u {variable} python "
        "app.py charge la copie de torch) ; ne le définissez que pour le programme C++ qui a "
        "besoin de cette libtorch.",
    "finding.CUDA_TOOLKIT_MISMATCH.summary":
        "Le CUDA toolkit avec lequel les extensions seraient compilées (nvcc {toolkit}, trouvé "
        "via {via}) n'a pas la version majeure de CUDA {build}, pour lequel ce torch a été "
        "construit : compiler une extension CUDA échouera.",
    "finding.CUDA_TOOLKIT_MISMATCH.next_action":
        "Faites pointer CUDA_HOME vers un CUDA toolkit de la version majeure du build (ou mettez "
        "son nvcc en premier dans le PATH), ou installez un torch pour CUDA {toolkit}. Le runtime"
        " de torch lui-même n'est pas touché.",
    "finding.CUDA_LIBRARY_SHADOWED.library_path.summary":
        "Ce processus a chargé {library} depuis un dossier de LD_LIBRARY_PATH, et non depuis le "
        "wheel {wheel} installé à côté de torch : torch tourne avec une bibliothèque pour "
        "laquelle il n'a pas été construit (le classique conflit de version de cuDNN).",
    "finding.CUDA_LIBRARY_SHADOWED.library_path.next_action":
        "Retirez ce dossier de LD_LIBRARY_PATH pour ce programme (ou mettez le dossier du wheel "
        "en premier), puis relancez la vérification.",
    "finding.CUDA_LIBRARY_SHADOWED.elsewhere.summary":
        "Ce processus a chargé {library} depuis un dossier hors du wheel {wheel} installé à côté "
        "de torch (une deuxième copie plus tôt dans le chemin de recherche) : torch tourne avec "
        "une bibliothèque pour laquelle il n'a pas été construit.",
    "finding.CUDA_LIBRARY_SHADOWED.elsewhere.next_action":
        "Supprimez l'autre copie (un dossier de pip install --target ou une entrée de PYTHONPATH "
        "contenant nvidia/...), ou réinstallez-la à la version que torch exige ; --show-paths et "
        "pip list aident à la trouver.",
    "finding.CUDA_LAUNCH_BLOCKING_ON.summary":
        "CUDA_LAUNCH_BLOCKING=1 est défini : chaque lancement de noyau sur le GPU attend que le "
        "GPU ait fini, ce qui ralentit beaucoup l'entraînement et l'inférence.",
    "finding.CUDA_LAUNCH_BLOCKING_ON.next_action":
        "Retirez CUDA_LAUNCH_BLOCKING hors du débogage (unset CUDA_LAUNCH_BLOCKING).",
    "finding.HSA_OVERRIDE_ON_SUPPORTED_GPU.summary":
        "HSA_OVERRIDE_GFX_VERSION={value} est défini alors que ce build ROCm a du code pour "
        "l'architecture propre du GPU : la substitution fait choisir au runtime du code construit"
        " pour un autre GPU.",
    "finding.HSA_OVERRIDE_ON_SUPPORTED_GPU.next_action":
        "Retirez HSA_OVERRIDE_GFX_VERSION (unset HSA_OVERRIDE_GFX_VERSION) et relancez la "
        "vérification.",
    "finding.WINDOWS_DLL_LOAD_FAILED.summary":
        "Windows n'a pas pu charger {dll} ou l'une de ses dépendances.",
    "finding.WINDOWS_DLL_LOAD_FAILED.next_action":
        "Installez la dernière version de Microsoft Visual C++ Redistributable (x64), puis "
        "réinstallez torch ({reinstall}).",
    "finding.SILENT_DATA_CORRUPTION.wrong.summary":
        "{device} a calculé une valeur fausse ({values}) sans aucune erreur : la signature "
        "d'une corruption silencieuse des données (un GPU défectueux, sa mémoire ou ses unités "
        "de calcul).",
    "finding.SILENT_DATA_CORRUPTION.wrong.next_action":
        "Relancez la vérification ; faux une fois, c'est déjà un appareil défectueux. Lancez le "
        "diagnostic du fabricant (NVIDIA : dcgmi diag -r 3 et nvidia-smi -q -d ECC ; AMD : rvs, "
        "la ROCm Validation Suite) ; s'il échoue ou si le résultat est encore faux, retirez le "
        "nœud du service et signalez le GPU à son exploitant.",
    "finding.SILENT_DATA_CORRUPTION.non_finite.summary":
        "{device} a produit NaN ou l'infini ({values}) pour un petit produit exact, sans aucune "
        "erreur : la signature d'une corruption silencieuse des données (un GPU défectueux, sa "
        "mémoire ou ses unités de calcul).",
    "finding.SILENT_DATA_CORRUPTION.non_finite.next_action":
        "Relancez la vérification ; faux une fois, c'est déjà un appareil défectueux. Lancez le "
        "diagnostic du fabricant (NVIDIA : dcgmi diag -r 3 et nvidia-smi -q -d ECC ; AMD : rvs, "
        "la ROCm Validation Suite) ; s'il échoue ou si le résultat est encore faux, retirez le "
        "nœud du service et signalez le GPU à son exploitant.",
    "finding.VISIBLE_DEVICE_UNMATCHED.summary":
        "CUDA_VISIBLE_DEVICES nomme {count} UUID de GPU qu'aucun GPU de cette machine n'a : CUDA "
        "ne donne aucun appareil pour eux.",
    "finding.VISIBLE_DEVICE_UNMATCHED.next_action":
        "Listez les GPU de cette machine avec nvidia-smi -L et mettez leurs UUID dans "
        "CUDA_VISIBLE_DEVICES (ou retirez-la) ; un UUID copié d'une autre machine ou d'un job "
        "terminé ne sélectionne rien.",
    "finding.HUNG_IN.summary":
        "La vérification est restée bloquée dans {package} ({place}) à l'étape {stage} jusqu'à "
        "ce que la limite de temps l'arrête.",
    "finding.HUNG_IN.next_action":
        "Voyez ce que {package} attend en {place} (un périphérique, un verrou, le réseau, une "
        "entrée) ; mettez-le à jour, corrigez-le s'il est à vous, ou retirez-le, puis relancez "
        "la vérification.",
    "finding.HUNG_IN.torch_backend.summary":
        "import torch est resté bloqué dans le greffon de périphérique {package} ({place}), que "
        "torch charge en s'important (groupe de points d'entrée torch.backends), jusqu'à ce que "
        "la limite de temps l'arrête.",
    "finding.HUNG_IN.torch_backend.next_action":
        "TORCH_DEVICE_BACKEND_AUTOLOAD=0 python app.py exécute torch sans charger ses greffons "
        "de périphérique ; si vous n'utilisez pas ce périphérique, retirez le greffon (python -m "
        "pip uninstall {distribution}), sinon voyez ce qu'il attend en {place} (son "
        "périphérique, son runtime).",
    "finding.TIME_LIMIT_REACHED.summary":
        "La vérification travaillait encore à l'étape {stage} quand sa limite de {seconds} s l'a "
        "arrêtée : lente, pas bloquée.",
    "finding.TIME_LIMIT_REACHED.next_action":
        "Relancez la vérification avec --timeout {maximum} (le maximum) ; si elle manque encore "
        "de temps, cherchez ce qui ralentit cette machine (une limite de CPU, un cache froid, un "
        "système de fichiers lent).",
    "finding.TIME_LIMIT_REACHED.at_maximum.summary":
        "La vérification travaillait encore à l'étape {stage} quand sa limite de {seconds} s, la "
        "plus grande, l'a arrêtée : lente, pas bloquée.",
    "finding.TIME_LIMIT_REACHED.at_maximum.next_action":
        "Cherchez ce qui ralentit cette machine (une limite de CPU, un cache froid, un système "
        "de fichiers lent) et relancez la vérification une fois la cause levée.",
    "finding.CPU_LIMITED.affinity.summary":
        "Ce processus peut utiliser {usable} des {logical} CPU logiques de la machine (son "
        "affinité CPU).",
    "finding.CPU_LIMITED.affinity.next_action":
        "Lancez-le sans l'affinité qui le limite (taskset, numactl, le cpuset d'un job ou d'un "
        "conteneur), ou demandez plus de CPU à l'ordonnanceur.",
    "finding.CPU_LIMITED.quota.summary":
        "Ce processus peut utiliser {usable} CPU de temps sur les {logical} CPU logiques de la "
        "machine (le quota CPU de son cgroup).",
    "finding.CPU_LIMITED.quota.next_action":
        "Lancez-le avec un quota CPU plus grand ou sans quota (--cpus d'un conteneur, la demande "
        "de CPU d'un job, CPUQuota de systemd), au moins un CPU entier.",
    "finding.ROCM_KFD_ACCESS.absent.summary":
        "/dev/kfd est absent : le pilote GPU AMD (amdgpu) n'est pas chargé ou n'est pas exposé "
        "ici.",
    "finding.ROCM_KFD_ACCESS.absent.next_action":
        "Chargez le pilote (sudo modprobe amdgpu) ou, dans un conteneur, passez "
        "--device=/dev/kfd --device=/dev/dri.",
    "finding.ROCM_KFD_ACCESS.wsl.summary":
        "ROCm sous WSL 2 ne trouve aucun GPU : WSL n'a pas de /dev/kfd, et ROCm n'atteint le "
        "GPU par /dev/dxg qu'avec la prise en charge WSL d'AMD installée.",
    "finding.ROCM_KFD_ACCESS.wsl.next_action":
        "Ne chargez pas amdgpu et ne passez pas /dev/kfd (WSL n'a ni l'un ni l'autre). Sous "
        "Windows, installez le pilote Adrenalin d'AMD compatible WSL ; dans WSL, installez ROCm "
        "pour WSL (amdgpu-install -y --usecase=wsl,rocm --no-dkms), puis relancez la vérification.",
    "finding.ROCM_KFD_ACCESS.no_access.summary":
        "/dev/kfd existe, mais cet utilisateur ne peut pas l'ouvrir.",
    "finding.ROCM_KFD_ACCESS.no_access.next_action":
        "Ajoutez l'utilisateur aux groupes render et video (sudo usermod -aG render,video "
        "$USER), puis reconnectez-vous ; dans un conteneur, passez aussi --group-add video.",
    "finding.ROCM_GFX_UNSUPPORTED.summary":
        "Ce paquet ROCm ne contient pas de code pour l'architecture gfx de ce GPU.",
    "finding.ROCM_GFX_UNSUPPORTED.next_action":
        "Installez un paquet ROCm qui prend en charge ce GPU ; pour une carte grand public "
        "d'architecture proche, HSA_OVERRIDE_GFX_VERSION (par exemple 11.0.0 pour gfx110x) est "
        "le contournement connu.",
    "finding.SLOW_FIRST_CALL.summary":
        "Le premier calcul a pris {seconds} s : les kernels ont probablement été compilés à la "
        "volée (PTX) ou le périphérique a mis du temps à se réveiller.",
    "finding.SLOW_FIRST_CALL.next_action":
        "Relancez la vérification : si elle est rapide la deuxième fois, c'était le cache JIT ; "
        "installez un paquet avec du code natif pour ce GPU pour l'éviter.",
    "finding.HOST_MEMORY_EXHAUSTED.summary":
        "Le processus a manqué de mémoire hôte (CPU) : std::bad_alloc, MemoryError, ou le "
        "chargeur n'a pas pu allouer.",
    "finding.HOST_MEMORY_EXHAUSTED.next_action":
        "Libérez de la mémoire ou relevez la limite du processus : ulimit -v (espace d'adressage), "
        "la limite mémoire du conteneur (docker run --memory), la mémoire demandée par le job ; "
        "importer torch seul demande environ 1 Go d'espace d'adressage.",
    "finding.HOST_MEMORY_EXHAUSTED.limited.summary":
        "Le processus a manqué de mémoire sous une limite qui lui est imposée ({command} : "
        "{limit}) : importer torch seul projette environ 1 Go, et le pilote d'un GPU réserve bien "
        "plus d'espace d'adressage.",
    "finding.HOST_MEMORY_EXHAUSTED.limited.next_action":
        "Relevez ou supprimez la limite pour ce programme ({command} unlimited dans le shell qui "
        "le lance), ou changez le réglage du job, du conteneur ou du nœud de connexion qui "
        "l'impose (Slurm transmet au job les limites du shell qui l'a soumis) ; puis relancez la "
        "vérification.",
    "finding.HOST_MEMORY_EXHAUSTED.cuda_reservation.summary":
        "CUDA n'a pas pu démarrer sous la limite d'espace d'adressage imposée à ce processus "
        "({command} : {limit}) : son « out of memory » signifie que le pilote n'a pas pu réserver "
        "l'espace d'adressage de l'hôte où il projette la mémoire des GPU (au moins aussi grand "
        "que cette mémoire, et jamais vraiment utilisé). La mémoire du GPU lui-même n'était pas "
        "épuisée.",
    "finding.HOST_MEMORY_EXHAUSTED.cuda_reservation.next_action":
        "Supprimez la limite pour ce programme ({command} unlimited dans le shell qui le lance ; "
        "limitez plutôt la mémoire par la demande de mémoire du job ou du conteneur, qui ne gêne "
        "pas CUDA), ou changez le réglage du job ou du nœud de connexion qui l'impose (Slurm "
        "transmet au job les limites du shell qui l'a soumis) ; puis relancez la vérification.",
    "finding.TOOL_ISOLATED_INSTALL.pipx.summary":
        "La vérification a tourné dans l'environnement pipx propre à l'outil, qui n'a pas torch : "
        "elle ne dit rien du Python de votre projet.",
    "finding.TOOL_ISOLATED_INSTALL.pipx.next_action":
        "Vérifiez plutôt l'interpréteur de votre projet : kernodeck-diagnostic --python "
        "/chemin/du/projet/bin/python (rien n'y est installé), ou lancez le fichier unique avec "
        "lui : /chemin/du/projet/bin/python kernodeck-diagnostic-v1.pyz.",
    "finding.TOOL_ISOLATED_INSTALL.uv_tool.summary":
        "La vérification a tourné dans l'environnement uv tool propre à l'outil, qui n'a pas "
        "torch : elle ne dit rien du Python de votre projet.",
    "finding.TOOL_ISOLATED_INSTALL.uv_tool.next_action":
        "Vérifiez plutôt l'interpréteur de votre projet : kernodeck-diagnostic --python "
        "/chemin/du/projet/bin/python (rien n'y est installé), ou lancez le fichier unique avec "
        "lui : /chemin/du/projet/bin/python kernodeck-diagnostic-v1.pyz.",
    "finding.TOOL_ISOLATED_INSTALL.venv.summary":
        "La vérification a tourné dans l'environnement virtuel qui contient la commande "
        "kernodeck-diagnostic, et torch n'y est pas installé.",
    "finding.TOOL_ISOLATED_INSTALL.venv.next_action":
        "Si votre projet utilise un autre environnement, vérifiez celui-là : kernodeck-diagnostic "
        "--python /chemin/du/projet/bin/python, ou /chemin/du/projet/bin/python -m "
        "kernodeck_diagnostic (avec le paquet installé là), ou ce Python avec le fichier unique. "
        "Si c'est l'environnement de votre projet, installez-y torch.",

    "finding.SLOW_FIRST_CALL.persistence_off.summary":
        "Le premier calcul a pris {seconds} s et le mode persistance est désactivé : le GPU a "
        "probablement été initialisé pour ce processus (quelques secondes par GPU), en plus "
        "d'une éventuelle compilation à la volée (PTX).",
    "finding.SLOW_FIRST_CALL.persistence_off.next_action":
        "Activez la persistance (sudo systemctl enable --now nvidia-persistenced, ou sudo "
        "nvidia-smi -pm 1) et relancez la vérification ; si elle reste lente la deuxième fois, "
        "installez un paquet avec du code natif pour ce GPU.",
    # -- le nœud, la santé des GPU et les variables (report/findings/, facts/node.py) ----------
    "finding.MASTER_PORT_IN_USE.summary":
        "Le port du store du job (MASTER_PORT) était déjà pris sur le nœud du rang 0 : le store "
        "ne peut pas démarrer (\"Address already in use\") et tous les rangs l'attendent.",
    "finding.MASTER_PORT_IN_USE.next_action":
        "Donnez à MASTER_PORT un port libre, ou arrêtez ce qui l'occupe (souvent un rang 0 resté "
        "d'un job précédent).",
    "finding.DUPLICATE_GPU_PER_RANK.summary":
        "Deux rangs d'un même nœud utilisent le même GPU : NCCL refuse le groupe (\"Duplicate "
        "GPU detected\").",
    "finding.DUPLICATE_GPU_PER_RANK.next_action":
        "Lancez au plus un rang par GPU (--nproc-per-node pas plus grand que le nombre de GPU, "
        "ou un GPU par tâche via l'ordonnanceur) et choisissez le périphérique de chaque rang "
        "d'après LOCAL_RANK.",
    "finding.NCCL_P2P_BROKEN.summary":
        "Une copie directe entre deux GPU qui calculent correctement est arrivée fausse ou ne "
        "s'est jamais terminée : les transferts pair à pair sont cassés sur ce nœud (souvent l'ACS "
        "PCIe ou l'IOMMU), et NCCL les utilise entre ces GPU.",
    "finding.NCCL_P2P_BROKEN.next_action":
        "Désactivez l'ACS PCIe (BIOS ou setpci) ou passez l'IOMMU en passthrough (iommu=pt), ou "
        "demandez-le au fournisseur ; en attendant, NCCL_P2P_DISABLE=1 fait passer NCCL par la "
        "mémoire de l'hôte.",
    "finding.NCCL_SOCKET_IFNAME_MISSING.summary":
        "{variables} ne nomme aucune interface réseau de ce nœud : NCCL (ou gloo) ne trouve "
        "aucune interface de socket et le groupe ne peut pas se former.",
    "finding.NCCL_SOCKET_IFNAME_MISSING.next_action":
        "Nommez une interface qui existe sur chaque nœud (voir ip link ; un préfixe comme eth "
        "ou ib correspond à eth0 ou ib0), ou retirez la variable.",
    "finding.MEMLOCK_LOW.summary":
        "Des périphériques RDMA sont présents mais la mémoire verrouillée est limitée : NCCL ne "
        "peut pas enregistrer ses tampons (\"ibv_reg_mr failed: Cannot allocate memory\").",
    "finding.MEMLOCK_LOW.next_action":
        "Levez la limite (illimitée) pour le job (ulimit -l unlimited ; memlock dans "
        "/etc/security/limits.conf ; PropagateResourceLimits ou --ulimit memlock=-1 du "
        "conteneur).",
    "finding.SHM_TOO_SMALL.small.summary":
        "Le dossier de mémoire partagée /dev/shm n'a que {size_mib} Mio : les workers du "
        "DataLoader meurent sur « Bus error » et NCCL ne peut pas créer ses segments.",
    "finding.SHM_TOO_SMALL.small.next_action":
        "Donnez-en plus au conteneur : docker run --shm-size=8g (ou --ipc=host) ; sous "
        "Kubernetes, montez un emptyDir en mémoire (medium: Memory) sur /dev/shm.",
    "finding.SHM_TOO_SMALL.read_only.summary":
        "Cet utilisateur ne peut pas écrire dans le dossier de mémoire partagée /dev/shm : les "
        "workers du DataLoader et NCCL ne peuvent pas partager de mémoire entre processus.",
    "finding.SHM_TOO_SMALL.read_only.next_action":
        "Montez un /dev/shm accessible en écriture (un tmpfs, ou docker run --ipc=host / "
        "--shm-size=8g ; sous Kubernetes un emptyDir en mémoire).",
    "finding.DEVICE_ORDER_MISMATCH.summary":
        "Des GPU de modèles différents et un indice dans CUDA_VISIBLE_DEVICES : CUDA numérote "
        "d'abord le GPU le plus rapide, nvidia-smi selon le bus PCI, donc le même indice désigne "
        "des cartes différentes.",
    "finding.DEVICE_ORDER_MISMATCH.next_action":
        "export CUDA_DEVICE_ORDER=PCI_BUS_ID (pour que les indices de CUDA soient ceux de "
        "nvidia-smi), ou choisissez les GPU par UUID (nvidia-smi -L).",
    "finding.MIG_MULTIPLE_LISTED.summary":
        "CUDA_VISIBLE_DEVICES liste {count} périphériques MIG, mais un processus CUDA n'utilise "
        "que le premier qu'il atteint.",
    "finding.MIG_MULTIPLE_LISTED.next_action":
        "Donnez un seul périphérique MIG à chaque processus (CUDA_VISIBLE_DEVICES=MIG-<uuid>) ; "
        "un processus par tranche.",
    "finding.NVIDIA_MODULE_NOT_LOADED.summary":
        "Un GPU NVIDIA est sur le bus PCI, mais le module noyau NVIDIA n'est pas chargé.",
    "finding.NVIDIA_MODULE_NOT_LOADED.next_action":
        "Chargez-le (sudo modprobe nvidia ; dmesg dit pourquoi il échoue) ; après une mise à "
        "jour du noyau, recompilez-le pour le noyau en cours (DKMS : sudo dkms autoinstall) ; "
        "avec Secure Boot, enregistrez la clé de signature du module (mokutil) ou signez-le ; "
        "ou installez le pilote.",
    "finding.NOUVEAU_BOUND.summary":
        "{count} GPU NVIDIA sont tenus par nouveau, le pilote libre, que CUDA ne peut pas "
        "utiliser.",
    "finding.NOUVEAU_BOUND.next_action":
        "Mettez nouveau en liste noire (blacklist nouveau et options nouveau modeset=0 dans "
        "/etc/modprobe.d/), régénérez l'initramfs (sudo update-initramfs -u ou dracut -f), "
        "redémarrez et chargez le pilote NVIDIA.",
    "finding.CONTAINER_NO_COMPUTE_CAPABILITY.summary":
        "Les périphériques NVIDIA et NVML (la bibliothèque de nvidia-smi) sont là, mais pas "
        "libcuda.so.1 : le runtime du conteneur a fourni les bibliothèques utilitaires du "
        "pilote sans celles de calcul.",
    "finding.CONTAINER_NO_COMPUTE_CAPABILITY.next_action":
        "Démarrez le conteneur avec NVIDIA_DRIVER_CAPABILITIES=compute,utility (ou all), ou "
        "--gpus 'all,\"capabilities=compute,utility\"' ; dans Compose, capabilities: [gpu] ou "
        "[compute, utility].",
    "finding.WSL_LINUX_DRIVER_INSTALLED.system.summary":
        "C'est WSL 2, et le chargeur trouve la libcuda.so.1 d'un pilote Linux avant celle de "
        "WSL : un pilote NVIDIA pour Linux (ou un paquet du toolkit) a été installé dans la "
        "distribution.",
    "finding.WSL_LINUX_DRIVER_INSTALLED.system.next_action":
        "N'utilisez que le pilote Windows : retirez les paquets du pilote Linux de la "
        "distribution (p. ex. sudo apt remove --purge 'libnvidia-compute-*' 'nvidia-driver-*' ; "
        "installez le toolkit avec cuda-toolkit-12-x, jamais les méta-paquets cuda ou "
        "cuda-drivers), puis sudo ldconfig.",
    "finding.WSL_LINUX_DRIVER_INSTALLED.library_path.summary":
        "C'est WSL 2, et un dossier de LD_LIBRARY_PATH fournit une libcuda.so.1 avant la "
        "bibliothèque du pilote de WSL.",
    "finding.WSL_LINUX_DRIVER_INSTALLED.library_path.next_action":
        "Retirez ce dossier de LD_LIBRARY_PATH (la libcuda.so.1 de WSL est dans "
        "/usr/lib/wsl/lib) et ôtez-en les bibliothèques de pilote Linux.",
    "finding.LIBCUDA_LINK_MISSING.summary":
        "libcuda.so.1 est trouvée, mais pas de libcuda.so à côté : torch.compile (Triton) lie "
        "avec -lcuda et échoue sur « libcuda.so cannot found ».",
    "finding.LIBCUDA_LINK_MISSING.next_action":
        "Créez le lien dans le dossier du pilote (sudo ln -s libcuda.so.1 libcuda.so, puis sudo "
        "ldconfig), ou pointez TRITON_LIBCUDA_PATH vers un dossier contenant libcuda.so.",
    "finding.GPU_NODES_MISMATCH.summary":
        "Ce processus atteint moins de GPU que le pilote NVIDIA n'en a : les limites de "
        "périphériques d'un ordonnanceur ou d'un conteneur lui cachent les autres.",
    "finding.GPU_NODES_MISMATCH.next_action":
        "Demandez les GPU à l'ordonnanceur (Slurm : --gres=gpu:N ou --gpus=N ; Kubernetes : "
        "nvidia.com/gpu) au lieu d'exposer des périphériques à la main ; hors d'un job, vérifiez "
        "les permissions des nœuds de périphérique (ls -l /dev/nvidia*).",
    "finding.GPU_MEMORY_HELD.summary":
        "Avant la vérification, seuls {free} Gio des {total} Gio de {device} étaient libres : "
        "d'autres processus en tiennent la plus grande part.",
    "finding.GPU_MEMORY_HELD.next_action":
        "Trouvez ces processus (nvidia-smi les liste) et arrêtez-les, ou choisissez un GPU libre "
        "(--device-index, CUDA_VISIBLE_DEVICES).",
    "finding.GPU_BUSY.summary":
        "Le GPU est occupé ou indisponible : en mode de calcul exclusif ou interdit, un autre "
        "processus le tient, ou aucun processus ne peut y créer de contexte.",
    "finding.GPU_BUSY.next_action":
        "Utilisez un GPU libre, arrêtez le processus qui le tient, ou demandez à un "
        "administrateur de remettre le mode de calcul par défaut (sudo nvidia-smi -c DEFAULT).",
    "finding.ECC_UNCORRECTABLE.summary":
        "Le GPU signale des erreurs mémoire ECC non corrigibles : une panne matérielle, pas "
        "logicielle.",
    "finding.ECC_UNCORRECTABLE.next_action":
        "Videz le GPU (plus de nouveaux jobs), réinitialisez-le (sudo nvidia-smi -r) ou "
        "redémarrez ; si les erreurs reviennent, appelez le fournisseur ou le constructeur pour "
        "le remplacer.",
    "finding.GPU_NEEDS_RESET.summary":
        "Des pages ou des lignes mémoire attendent d'être retirées ou remappées : le GPU doit "
        "être réinitialisé pour que cela prenne effet.",
    "finding.GPU_NEEDS_RESET.next_action":
        "Videz le GPU, puis réinitialisez-le (sudo nvidia-smi -r -i N) ou redémarrez le nœud ; "
        "si cela se répète, appelez le fournisseur.",
    "finding.GPU_LOST.summary":
        "Un GPU est perdu : le pilote ne l'atteint plus (Xid 79, tombé du bus), une panne "
        "matérielle ou d'alimentation.",
    "finding.GPU_LOST.next_action":
        "Le nœud demande une intervention : videz-le, redémarrez-le et vérifiez l'alimentation "
        "et l'insertion du GPU (dmesg montre le Xid) ; appelez le fournisseur si cela se "
        "reproduit.",
    "finding.PERSISTENCE_MODE_OFF.summary":
        "Le mode persistance est désactivé et le démarrage a été lent : sans lui, le pilote "
        "initialise les GPU pour chaque processus (1 à 3 s par GPU) puis les libère.",
    "finding.PERSISTENCE_MODE_OFF.next_action":
        "Activez-le : sudo systemctl enable --now nvidia-persistenced (ou sudo nvidia-smi -pm 1).",
    "finding.DEBUG_INJECTION_SET.summary":
        "Des variables qui changent le comportement de CUDA (débogueurs, profileurs, injection, "
        "core dumps) sont définies : {names}.",
    "finding.DEBUG_INJECTION_SET.next_action":
        "Retirez-les pour la production (unset {names}) ; gardez-les seulement pour déboguer ou "
        "profiler.",
    "finding.ROCM_VISIBILITY_CONFLICT.summary":
        "HIP_VISIBLE_DEVICES est définie avec {variables}, et elles sélectionnent différemment : "
        "ROCr applique d'abord ROCR_VISIBLE_DEVICES et HIP indexe ce qui reste.",
    "finding.ROCM_VISIBILITY_CONFLICT.next_action":
        "N'utilisez qu'une variable (ROCR_VISIBLE_DEVICES sous Linux) et retirez les autres.",

    # -- la couche des bibliothèques (--extensions, --kernels ; docs/libraries.md) --------------
    "finding.EXTENSION_TORCH_MISMATCH.declared.summary":
        "{name} {version} exige torch{wants}, mais torch {torch} est installé : il a été compilé "
        "pour un autre torch.",
    "finding.EXTENSION_TORCH_MISMATCH.declared.next_action":
        "Installez torch et {name} ensemble, épinglés, depuis le même index, pour que pip "
        "choisisse le {name} compilé pour ce torch : {command} ; ou mettez torch à la version "
        "que {name} exige.",
    "finding.EXTENSION_TORCH_MISMATCH.built.summary":
        "{name} {version} a été compilé pour un autre torch que le {torch} installé : son import "
        "échoue avec les signes de ce décalage.",
    "finding.EXTENSION_TORCH_MISMATCH.built.next_action":
        "Installez torch et {name} ensemble, épinglés, depuis le même index, pour que pip "
        "choisisse le {name} compilé pour ce torch : {command}.",
    "finding.EXTENSION_CUDA_MISMATCH.summary":
        "{name} {version} a été compilé pour {theirs}, torch {torch} pour {ours}.",
    "finding.EXTENSION_CUDA_MISMATCH.next_action":
        "Réinstallez {name} depuis l'index de la compilation de torch, torch épinglé : {command}.",
    "finding.EXTENSION_IMPORT_FAILED.failed.summary":
        "{name} {version} ne s'importe pas : {what}",
    "finding.EXTENSION_IMPORT_FAILED.failed.next_action":
        "Importez-le seul pour voir l'erreur entière (python -c \"import {module}\"), puis "
        "réinstallez-le pour ce torch et ce Python, avec ce qui lui manque.",
    "finding.EXTENSION_IMPORT_FAILED.timeout.summary":
        "L'import de {name} {version} ne s'est pas terminé en {seconds} s : il attend quelque "
        "chose (un verrou, le réseau, un pilote) ou il est très lent.",
    "finding.EXTENSION_IMPORT_FAILED.timeout.next_action":
        "Importez-le seul pour voir où il attend : python -X importtime -c \"import {module}\" "
        "(ou py-spy dump sur le processus bloqué).",
    "finding.DTYPE_UNSUPPORTED.summary":
        "{device} n'a pas de {dtype} natif : le produit matriciel en {dtype} n'y est pas pris en "
        "charge.",
    "finding.DTYPE_UNSUPPORTED.next_action":
        "Utilisez {instead} à la place (précision mixte : torch.autocast(device_type=\"cuda\", "
        "dtype=torch.float16) avec torch.amp.GradScaler), ou un périphérique avec {dtype} natif "
        "(bfloat16 : NVIDIA Ampere, sm_80, ou plus récent).",
    "finding.COMPILER_MISSING.cpp.summary":
        "torch.compile n'a trouvé aucun compilateur C++ qui fonctionne : sur le CPU, il compile "
        "avec lui le code qu'il génère.",
    "finding.COMPILER_MISSING.cpp.next_action":
        "Installez-en un (Debian, Ubuntu : sudo apt install g++ ; Fedora : sudo dnf install "
        "gcc-c++ ; conda : conda install -c conda-forge cxx-compiler ; Windows : Visual Studio "
        "Build Tools) ou faites pointer CXX vers un qui fonctionne ; vérifiez avec g++ --version.",
    "finding.COMPILER_MISSING.cxx_not_found.summary":
        "torch.compile n'a pas pu lancer le compilateur C++ que nomme CXX : CXX désigne un "
        "programme que ce PATH ne peut pas lancer, et sur le CPU torch.compile n'en essaie pas "
        "d'autre.",
    "finding.COMPILER_MISSING.cxx_not_found.next_action":
        "Retirez CXX (env -u CXX python app.py, ou unset CXX dans le shell ou le script de la "
        "tâche qui le définit) ou faites-le pointer vers un compilateur qui fonctionne ici ; "
        "vérifiez avec $CXX --version.",
    "finding.COMPILER_MISSING.triton.summary":
        "torch.compile n'a trouvé aucun Triton qui fonctionne : sur un GPU, il génère des noyaux "
        "Triton.",
    "finding.COMPILER_MISSING.triton.next_action":
        "Installez le Triton avec lequel torch a été compilé (python -m pip install triton à la "
        "version que torch exige ; il vient avec les wheels CUDA de torch pour Linux ; ROCm : "
        "pytorch-triton-rocm ; Windows : triton-windows).",
    "finding.COMPILE_CACHE_UNUSABLE.not_a_folder.summary":
        "torch.compile échouera dans vos programmes : son dossier de cache, "
        "torchinductor_<votre nom d'utilisateur> dans le dossier temporaire, est un fichier.",
    "finding.COMPILE_CACHE_UNUSABLE.not_a_folder.next_action":
        'Supprimez ce fichier (rm "${{TMPDIR:-/tmp}}/torchinductor_$(whoami)"), ou faites '
        "pointer TORCHINDUCTOR_CACHE_DIR vers un dossier à vous.",
    "finding.COMPILE_CACHE_UNUSABLE.not_writable.summary":
        "torch.compile échouera dans vos programmes : son dossier de cache, "
        "torchinductor_<votre nom d'utilisateur> dans le dossier temporaire, est un dossier "
        "où vous ne pouvez pas écrire (laissé par une exécution sous un autre utilisateur, "
        "comme sudo -E, ou créé par un autre utilisateur).",
    "finding.COMPILE_CACHE_UNUSABLE.not_writable.next_action":
        "Faites-le supprimer par son propriétaire (sudo rm -r "
        '"${{TMPDIR:-/tmp}}/torchinductor_$(whoami)"), ou faites pointer '
        "TORCHINDUCTOR_CACHE_DIR vers un dossier à vous ; ne le rendez jamais accessible en "
        "écriture à tous : les fichiers d'un autre utilisateur y seraient exécutés par vos "
        "programmes.",
    "finding.FUSED_ATTENTION_UNAVAILABLE.summary":
        "scaled_dot_product_attention ne peut pas utiliser {backends} ici : il se rabat sur des "
        "noyaux plus lents.",
    "finding.FUSED_ATTENTION_UNAVAILABLE.next_action":
        "Rien n'est cassé. Les preuves donnent la raison de torch pour chaque backend (une "
        "architecture de GPU plus ancienne, un dtype ou une taille de tête qu'il ne prend pas, "
        "une compilation sans lui) ; flash attention demande un GPU NVIDIA Ampere (sm_80) ou "
        "plus récent.",

    # -- the tool's own sentences in error.message (error.message_key) -----------------------
    "error.backend_absent": "le paquet ne déclare aucun backend GPU (ni CUDA, ni HIP, ni XPU, "
                            "ni MPS)",
    "error.torch_shadowed":
        "'import torch' chargerait {module} (origine : {origin}), pas un paquet PyTorch "
        "installé : il n'a pas été importé",
    "error.torch_incomplete":
        "'import torch' a donné un module sans {missing} : pas un PyTorch",
    "error.gpu_unavailable": "torch.cuda.is_available() vaut False",
    "error.gpu_unavailable.reason": "torch.cuda.is_available() vaut False : {reason}",
    "error.backend_unavailable": "{call} vaut False",
    "error.backend_unavailable.reason": "{call} vaut False : {reason}",
    "error.no_visible_device": "aucun périphérique visible",
    "error.no_visible_device.reason": "aucun périphérique visible : {reason}",
    "error.device_index_invalid": "index de périphérique {index} pour {count} visibles",
    "error.extension_failed":
        "{count} extension(s) de torch sur {total} ne s'importent pas ; la première : {name} "
        "{version} : {what}",
    "error.extension_failed.timeout":
        "{count} extension(s) de torch sur {total} ne s'importent pas ; la première : {name} "
        "{version}, dont l'import ne s'est pas terminé en {seconds} s",
    "error.extension_failed.skipped":
        "le temps de la vérification s'est écoulé avant l'import de {count} extension(s) de "
        "torch sur {total} : donnez un --timeout plus long",
    "error.kernel_wrong":
        "le noyau {kernel} a donné un résultat faux (plus grand écart à la réponse connue : "
        "{difference})",
    "error.check_failed": "résultat faux : {what}",
    "error.no_verified_result": "le worker n'a rapporté aucun résultat vérifié",
    "error.unreadable_log":
        "le journal d'événements du worker contenait {count} ligne(s) illisible(s) et aucun "
        "résultat vérifié",
    "error.timeout_hung_in":
        "aucun résultat en {seconds} s ; le worker a été arrêté pendant {at}, bloqué dans "
        "{package} ({place})",
    "error.timeout": "aucun résultat en {seconds} s ; le worker a été arrêté pendant {at}",
    "error.launcher_stop.time_limit":
        "le job a atteint sa limite de temps Slurm pendant {at} : Slurm l'a arrêté (SIGTERM) "
        "avant un résultat, pas un échec de ce rang",
    "error.launcher_stop.cancelled":
        "le job a été annulé pendant {at} (scancel, srun interrompu, une tâche en échec sous "
        "--kill-on-bad-exit, une préemption) : arrêté avant un résultat, pas un échec de ce rang",
    "error.launcher_stop.sigterm":
        "le lanceur a arrêté le job pendant {at} (SIGTERM : annulé, ou sa limite de temps) avant "
        "un résultat, pas un échec de ce rang",
    "error.collective.missing_ranks":
        "rang(s) {ranks} sans réponse dans le temps imparti (collective : {status})",
    "error.collective.store_unresolvable":
        "MASTER_ADDR ne se résout en aucune adresse : le store du job n'a jamais été atteint",
    "error.collective.store_refused":
        "rien n'écoute à l'adresse et au port du store (connexion refusée) : le rang 0 n'y a "
        "jamais servi le store, ou MASTER_ADDR / MASTER_PORT diffèrent entre les rangs",
    "error.collective.store_unreachable":
        "l'adresse du store ne répond pas (pas de route, ou pas de réponse à temps) : une adresse "
        "d'un autre réseau, ou un pare-feu",
    "error.collective.store_silent":
        "un programme qui n'est pas le store du job occupe son port : le store n'a jamais répondu",
    "error.collective.store_in_use":
        "le rang 0 n'a pas pu servir le store : son port est utilisé par un autre programme",
    "error.collective.store_foreign":
        "le rang 0 n'a pas pu servir le store : le store d'un autre job occupe son port (deux jobs "
        "sur un même MASTER_PORT)",
    "error.collective.duplicated_ranks":
        "rang(s) {ranks} rejoint(s) deux fois : deux processus ont été lancés comme le même rang "
        "(RANK ou SLURM_PROCID identique sur deux processus, ou deux jobs sur un même store)",
    "error.collective.launcher_tasks":
        "le lanceur a démarré {tasks} tâche(s) mais les rangs ont formé un monde de "
        "{world_size} : les variables de torchrun exportées dans une étape srun isolent chaque "
        "tâche",
    "next.launcher_stopped":
        "Rien n'a été prouvé sur ce nœud, ni contre lui : le job a été arrêté avant la fin de la "
        "vérification. Relancez-la dans un job dont la limite de temps dépasse --timeout, et "
        "cherchez dans le journal du lanceur qui l'a arrêté.",
    "next.collective.duplicated_ranks":
        "Donnez à chaque processus son propre rang (RANK de 0 à WORLD_SIZE - 1, une fois "
        "chacun), et un MASTER_PORT par job.",
    "next.collective.launcher_tasks":
        "N'exportez pas RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR et MASTER_PORT dans une étape "
        "srun : laissez chaque tâche prendre son rang de Slurm (SLURM_PROCID), ou lancez torchrun "
        "sous srun.",
    "error.collective.world_sizes":
        "les rangs ne s'accordent pas sur la taille du monde ({sizes}) : donnez la même valeur à "
        "WORLD_SIZE (ou srun -n) pour chaque rang",
    "error.collective.missing_ranks_slurm":
        "rang(s) {ranks} sans réponse dans le délai (collective : {status}) ; srun attend une "
        "tâche arrêtée par défaut : lancez srun --kill-on-bad-exit=1",
    "next.collective.store":
        "Vérifiez MASTER_ADDR et MASTER_PORT sur chaque rang : l'adresse doit se résoudre et "
        "joindre le nœud du rang 0 depuis chaque nœud, et le port y être libre au démarrage.",
    "next.collective.world_sizes":
        "Donnez la même taille de monde à chaque rang (--nnodes et --nproc-per-node de torchrun, "
        "ou srun -n) ; n'exportez pas WORLD_SIZE pour une partie des rangs seulement.",
    "next.collective.missing_slurm":
        "Lancez srun avec --kill-on-bad-exit=1 (par défaut il attend une tâche arrêtée), puis "
        "lisez les rapports des rangs manquants et le journal du job pour savoir pourquoi.",
    "error.collective.failed_ranks": "rang(s) {ranks} en échec (collective : {status})",
    "error.collective.wrong_sum": "l'all-reduce a donné {observed}, attendu {expected}",
    "error.collective.status":
        "la collective s'est terminée avec l'état {status} ({backend}, {world_size} rangs)",
    "error.collective.not_gathered":
        "les résultats des rangs ne sont jamais parvenus à ce rang (collective : {status})",
    "error.timeout_at_start":
        "l'interpréteur n'avait pas démarré en {seconds} s : il se bloque au démarrage, ou démarre "
        "plus lentement que la limite de temps ne le permet (un script intermédiaire, un système "
        "de fichiers lent, un hook de site)",
    "error.worker_ended.signal":
        "le worker a été tué par le signal {signal} pendant {at}, sans résultat final",
    "error.worker_ended.exit":
        "le worker s'est terminé avec le code {code} pendant {at}, sans résultat final",
    "error.worker_ended.status":
        "le worker s'est terminé avec le statut {status} pendant {at}, sans résultat final",
    "error.worker_ended.running":
        "le worker tournait encore à son arrêt pendant {at}, sans résultat final",
    "error.worker_ended.signal_stderr":
        "le worker a été tué par le signal {signal} pendant {at}, sans résultat final ; sa "
        "dernière ligne sur stderr : {stderr}",
    "error.worker_ended.exit_stderr":
        "le worker s'est terminé avec le code {code} pendant {at}, sans résultat final ; sa "
        "dernière ligne sur stderr : {stderr}",
    "error.worker_ended.status_stderr":
        "le worker s'est terminé avec le statut {status} pendant {at}, sans résultat final ; sa "
        "dernière ligne sur stderr : {stderr}",
    "error.worker_ended.running_stderr":
        "le worker tournait encore à son arrêt pendant {at}, sans résultat final ; sa dernière "
        "ligne sur stderr : {stderr}",
    "error.not_started.worker_missing":
        "le worker n'a pas pu démarrer : le module du worker manque à l'installation de l'outil "
        "lui-même ({detail}) ; réinstallez l'outil",
    "error.not_started.temp_folder":
        "le worker n'a pas pu démarrer : aucun dossier temporaire privé ({detail})",
    "error.not_started.temp_not_writable":
        "le worker n'a pas pu démarrer : le dossier temporaire n'est pas accessible en écriture"
        " ({detail})",
    "error.not_started.file_size_limit":
        "le worker n'a pas pu être lancé : une limite de taille de fichier de ce processus "
        "(ulimit -f) a refusé ses fichiers dans le dossier temporaire ({detail}) ; relevez ou "
        "supprimez la limite",
    "error.not_started.interpreter":
        "le worker n'a pas pu démarrer : l'interpréteur n'a pas pu démarrer ({detail})",

    # -- terminal and markdown -------------------------------------------------------------------
    "ui.status.passed": "RÉUSSI",
    "ui.status.failed": "ÉCHEC",
    "ui.headline": "{status} {code} (code de sortie {exit_code}) à l'étape {stage}",
    "ui.headline.exit_as":
        "{status} {code} (code de sortie {exit_code}, {exit_as}) à l'étape {stage}",
    "ui.label.runtime": "plateforme",
    "ui.label.pytorch": "pytorch",
    "ui.label.gpu": "gpu",
    "ui.label.execution": "exécution",
    "ui.label.host": "système",
    "ui.label.distributed": "distribué",
    "ui.distributed.job": "{launcher}, rang {rank} sur {world_size}",
    "ui.distributed.collective": "collective {status} : somme {observed} (attendue {expected})",
    "ui.distributed.collective_wrong_sum":
        "collective à la somme fausse : {observed} (attendue {expected})",
    "ui.distributed.rank": "rang {rank}",
    "ui.distributed.rank_entry": "{code} à {stage}, nœud {node}, rang local {local_rank}",
    "ui.distributed.missing": "rangs absents : {ranks}",
    "ui.distributed.launcher_stopped":
        "le lanceur a arrêté le job pendant la vérification (SIGTERM) : pas un échec de ce rang",
    "ui.distributed.launcher_stop.time_limit":
        "le job a atteint sa limite de temps Slurm pendant la vérification (SIGTERM) : pas un "
        "échec de ce rang",
    "ui.distributed.launcher_stop.cancelled":
        "le job a été annulé pendant la vérification (SIGTERM avant sa limite de temps) : pas un "
        "échec de ce rang",
    "ui.label.error": "erreur",
    "ui.label.warning": "avertissement",
    "ui.label.findings": "constats",
    "ui.label.next": "prochaine action",
    "ui.label.do": "à faire",
    "ui.label.paths": "chemins",
    "ui.runtime.unknown": "inconnue (le processus de vérification n'a pas démarré)",
    "ui.runtime.environment": "environnement {kind}",
    "ui.pytorch.not_imported": "non importé",
    "ui.pytorch.unknown_version": "version inconnue",
    "ui.pytorch.distribution": "distribution installée {version}",
    "ui.gpu.not_queried": "non interrogé en mode CPU",
    "ui.gpu.available": "disponible",
    "ui.gpu.not_available": "indisponible",
    "ui.gpu.visible": "visibles : {count}",
    "ui.device.passed": "réussi en {ms} ms",
    "ui.device.failed": "{code} à {where} : {what}",
    "ui.device.not_checked": "non vérifié : le worker a été arrêté avant ce périphérique",
    "ui.label.peers": "pairs",
    "ui.peers.verified": "{verified} copies vérifiées sur {total}",
    "ui.peers.access": "accès direct {access} sur {total}",
    "ui.peers.access_unknown": "accès direct inconnu",
    "ui.peers.access_partly": "accès direct {access} sur {total}, {unknown} inconnu(s)",
    "ui.peers.not_tried":
        "{count} copie(s) non tentée(s) (le worker a été arrêté avant) : {copies}",
    "ui.peers.failed": "{source} -> {target} : {code}",
    "ui.execution.not_reached": "non atteinte",
    "ui.execution.on": "sur {device}",
    "ui.execution.product": "produit {state}",
    "ui.execution.gradient": "gradient {state}",
    "ui.execution.verified": "ok",
    "ui.execution.not_verified": "NON vérifié",
    "ui.execution.synchronized": "synchronisé",
    "ui.host.not_found": "{tool} introuvable",
    "ui.host.timeout": "{tool} a dépassé le délai (3 s)",
    "ui.host.failed": "{tool} a échoué",
    "ui.host.driver": "pilote {version}",
    "ui.host.mig": "{count} périphérique(s) MIG",
    "ui.label.system": "machine",
    "ui.label.driver": "pilote",
    "ui.label.toolkit": "toolkit",
    "ui.label.configuration": "configuration",
    "ui.label.cuda_libraries": "libs cuda",
    "ui.label.packages": "paquets",
    "ui.system.kernel": "noyau {kernel}",
    "ui.system.cpus": "{count} CPU logiques",
    "ui.system.cpus_usable": "{count} CPU logiques, {usable} utilisables par ce processus",
    "ui.system.driver": "NVIDIA {version} (module du noyau)",
    "ui.system.toolkit":
        "nvcc {version} (via {via}), pour compiler les extensions, pas le runtime de torch",
    "ui.system.toolkit.default_location": "l'emplacement par défaut",
    "ui.system.toolkit_not_found": "aucun CUDA toolkit trouvé (pour compiler les extensions)",
    "ui.system.toolkit_failed": "nvcc n'a pas répondu",
    "ui.pytorch.debug": "build de débogage",
    "ui.libraries.other": "une autre copie chargée",
    "ui.error.at": "à l'étape {where} : {what}",
    "ui.warning.during": "{category} pendant {stage} : {message}",
    "ui.paths.interpreter": "interpréteur {path}",
    "ui.paths.torch": "torch {path}",
    "ui.paths.note": "(affiché sur ce terminal uniquement, jamais enregistré dans un rapport)",
    "ui.live.interpreter": "démarrage de Python",
    "ui.live.import": "import de torch",
    "ui.live.backend": "lecture du paquet",
    "ui.live.device": "interrogation du GPU",
    "ui.live.compute": "calcul",
    "ui.live.extensions": "import des extensions de torch",
    "ui.live.kernels": "exécution des noyaux",
    "ui.label.extensions": "extensions",
    "ui.label.kernels": "noyaux",
    "ui.libraries.none": "aucune installée",
    "ui.libraries.not_reached": "non atteint",
    "ui.libraries.status.passed": "ok",
    "ui.libraries.status.failed": "ÉCHEC",
    "ui.libraries.status.timeout": "DÉLAI DÉPASSÉ",
    "ui.libraries.status.skipped": "sauté",
    "ui.libraries.status.unsupported": "non pris en charge",
    "ui.libraries.requires": "exige torch{wants}",
    "ui.libraries.bandwidth": "{to_device} Go/s vers le périphérique, {to_host} Go/s au retour",
    "ui.libraries.compile": "compilé en {ms} ms",
    "ui.libraries.wrong": "résultat faux (plus grand écart {difference})",
    "ui.live.collective": "rejoint les autres rangs",
    "ui.live.done": "vérification terminée en {seconds} s",
    "ui.severity.error": "erreur",
    "ui.severity.warning": "avertissement",
    "ui.severity.info": "info",
    "ui.markdown.headline":
        "**{status}** `{code}` (code de sortie {exit_code}), étape `{stage}` : {summary}",
    "ui.markdown.title": "Rapport kernodeck-diagnostic",
    "ui.markdown.field": "Champ",
    "ui.markdown.value": "Valeur",

    # -- the command line's own messages ---------------------------------------------------------
    "command.usage_error": "erreur: {message} (voir --help)",
    "cli.timeout.not_a_number": "n'est pas un nombre de secondes : {value}",
    "arg.timeout.range":
        "doit être compris entre {low} et {high} secondes, valeur reçue : {value}",
    "cli.index.not_a_number": "n'est pas un nombre entier : {value}",
    "arg.index.negative": "doit être supérieur ou égal à 0, valeur reçue : {value}",
    "cli.contradiction": "{first} contredit {second} : {reason} ; donnez l'un des deux",
    "arg.contradiction.all_devices.cpu":
        "tous les GPU sont vérifiés, et le mode CPU n'en utilise aucun",
    "arg.contradiction.all_devices.distributed":
        "chaque rang vérifie le périphérique de son propre rang local, pas tous les GPU",
    "arg.contradiction.all_devices.device_index":
        "tous les GPU sont vérifiés, pas un GPU choisi",
    "arg.contradiction.distributed.device_index":
        "chaque rang vérifie le périphérique de son propre rang local, pas un GPU choisi",
    "arg.contradiction.cpu.device_index":
        "le mode CPU n'utilise aucun GPU : aucun indice de GPU ne s'applique",
    "arg.contradiction.show_paths.format":
        "les chemins ne s'affichent que dans la sortie texte, jamais en JSON ni en markdown",
    "cli.device.rocm":
        "{value} n'est pas un mode de périphérique : les paquets ROCm et CUDA de PyTorch "
        "utilisent tous deux le nom de périphérique 'cuda', utilisez donc --device gpu (la "
        "valeur par défaut)",
    "arg.device.unknown": "doit être gpu ou cpu, valeur reçue : {value}",
    "api.argument": "check({parameter}=...) : {reason}",
    "api.contradiction": "check({first}, {second}) : ces arguments se contredisent : {reason}",
    "api.device.rocm":
        "{value} n'est pas un mode de périphérique : les paquets ROCm et CUDA de PyTorch "
        "utilisent tous deux le nom de périphérique 'cuda', utilisez donc device='gpu' (la "
        "valeur par défaut)",
    "api.type.device": "check(device=...) attend un str, 'gpu' ou 'cpu' ; pas {type}",
    "api.type.device_index": "check(device_index=...) attend un int ; pas {type}",
    "api.type.progress": "check(progress=...) attend une fonction ou None ; pas {type}",
    "api.type.timeout":
        "check(timeout=...) attend des secondes sous forme d'int ou de float ; pas {type}",
    "api.type.host_check": "check(host_check=...) attend True ou False ; pas {type}",
    "api.type.flag": "check({parameter}=...) attend True ou False ; pas {type}",
    "api.type.all_devices": "check(all_devices=...) attend True ou False ; pas {type}",
    "api.type.distributed": "check(distributed=...) attend True ou False ; pas {type}",
    "api.type.python":
        "check(python=...) attend le chemin de l'interpréteur sous forme de str ou "
        "d'os.PathLike, ou None ; pas {type}",
    "arg.python.missing":
        "ce fichier n'existe pas ; donnez le chemin de l'interpréteur (dans un "
        "environnement virtuel, bin/python, ou Scripts\\python.exe sous Windows)",
    "arg.python.dangling":
        "c'est un lien vers un interpréteur qui n'existe plus : le Python à partir "
        "duquel cet environnement virtuel a été créé a été supprimé ou mis à jour ; recréez "
        "l'environnement",
    "arg.python.no_access":
        "cet interpréteur existe mais cet utilisateur ne peut pas l'atteindre : un dossier sur "
        "son chemin vous est fermé (permission refusée ; le dossier personnel d'un autre "
        "utilisateur, par exemple) ; demandez à son propriétaire d'ouvrir ces dossiers (chmod "
        "o+x sur chacun), ou utilisez un Python à vous",
    "arg.python.folder":
        "c'est un dossier ; donnez l'interpréteur qu'il contient (dans un "
        "environnement virtuel, bin/python, ou Scripts\\python.exe sous Windows)",
    "arg.python.not_executable":
        "ce fichier n'est pas exécutable ; donnez l'interpréteur lui-même (dans un "
        "environnement virtuel, bin/python)",
    "arg.python.not_runnable":
        "le système ne peut pas lancer ce fichier (un script dont l'interpréteur "
        "manque, ou un programme pour un autre système ou processeur)",
    "arg.python.not_python":
        "ce programme n'est pas un interpréteur Python : il s'est exécuté, mais n'a "
        "pas répondu comme tel",
    "arg.python.too_old":
        "cet interpréteur est Python {version} ; le minimum est {minimum}",
    "cli.distributed.no_launcher":
        "--distributed s'exécute sous un lanceur : torchrun (définit {torchrun}) ou srun de "
        "Slurm (définit {slurm}) ; aucune de ces variables n'est définie",
    "cli.distributed.missing": "--distributed sous {launcher} : {names} non définie(s)",
    "cli.distributed.invalid": "--distributed : la variable {name} n'a pas une valeur valide",
    "cli.distributed.rank_range":
        "--distributed : le rang {rank} n'est pas inférieur à la taille "
        "{world_size}",
    "cli.distributed.ignored":
        "avertissement : --distributed sous Slurm : {names} définie(s) sans les autres variables "
        "de torchrun (un export du script du job ?) : ignorée(s), celles de Slurm placent ce rang",
    "cli.distributed.no_file":
        "le rang {rank} n'écrit aucun fichier : --output sans {placeholder} nomme le seul "
        "rapport du rang 0 (celui du job) ; mettez {placeholder} dans le nom pour un fichier par "
        "rang",
    "cli.distributed.rank_verdict":
        "rang {rank} sur {world_size} : {code} (sortie {exit}) ; le rapport du job est "
        "celui du rang 0",
    "cli.output.dash":
        "--output - créerait un fichier nommé '-' : pour le rapport JSON sur la sortie standard "
        "utilisez --format json ; pour un fichier vraiment nommé '-' écrivez ./-",
    "cli.output.preflight":
        "impossible d'écrire le rapport dans le fichier demandé : {reason}. Rien n'a été "
        "exécuté (code de sortie {exit}).",
    "cli.output.not_saved":
        "le rapport n'a PAS été enregistré : {reason} (code de sortie {exit}, "
        "OUTPUT_WRITE_FAILED).",
    "cli.stdout.saved":
        "le rapport a été enregistré dans le fichier demandé, mais n'a pas pu être écrit sur la "
        "sortie standard : {reason} (code de sortie {exit}, {code}).",
    "cli.stdout.lost":
        "le résultat n'a pas pu être écrit sur la sortie standard : {reason} (code de sortie "
        "{exit}, {code}).",
    "output.reason.empty": "le nom du fichier est vide",
    "output.reason.exists_file": "un fichier de ce nom existe déjà ; il n'est jamais écrasé",
    "output.reason.exists_link":
        "un lien symbolique de ce nom existe déjà ; il n'est jamais écrasé",
    "output.reason.exists_folder": "un dossier de ce nom existe déjà",
    "output.reason.exists_device":
        "ce nom est un périphérique, pas un fichier ordinaire ; le rapport n'est écrit que dans "
        "un nouveau fichier",
    "output.reason.exists_fifo":
        "ce nom est un tube nommé (FIFO), pas un fichier ordinaire ; le rapport n'est écrit que "
        "dans un nouveau fichier",
    "output.reason.exists_socket":
        "ce nom est une socket, pas un fichier ordinaire ; le rapport n'est écrit que dans un "
        "nouveau fichier",
    "output.reason.no_working_folder":
        "le dossier de travail n'existe plus, un nom relatif n'a donc pas de dossier ; placez-vous "
        "dans un dossier qui existe ou donnez un chemin complet",
    "output.reason.no_folder": "son dossier n'existe pas",
    "output.reason.pseudo_filesystem":
        "son dossier est sur {kind}, un système de fichiers du noyau "
        "qui ne contient aucun fichier ordinaire",
    "output.reason.not_a_folder": "son dossier n'est pas un dossier",
    "output.reason.not_writable": "son dossier n'est pas accessible en écriture",
    "output.reason.name_too_long": "le nom du fichier est trop long",
    "output.reason.permission": "permission refusée",
    "output.reason.no_space": "plus d'espace disponible sur le périphérique",
    "output.reason.too_large":
        "le fichier dépasse la taille autorisée (limite de taille de fichier)",
    "output.reason.quota": "quota de disque dépassé",
    "output.reason.read_only": "le système de fichiers est en lecture seule",
    "output.reason.loop": "trop de niveaux de liens symboliques",
    "output.reason.nul":
        "le nom du fichier contient un caractère NUL",
    "output.reason.trailing_separator":
        "le nom se termine par un séparateur de dossier : indiquez un nom de fichier",
    "output.reason.unencodable":
        "le nom du fichier ne peut pas être encodé pour ce système de fichiers",
    "output.reason.no_folder_tilde":
        "son dossier n'existe pas (un ~ initial n'est pas votre dossier personnel ici : le shell "
        "ne l'a pas développé ; écrivez le chemin complet)",
    "output.reason.closed": "elle est fermée",
    "output.reason.other": "le système a refusé l'écriture ({detail})",
    "check.interrupted":
        "interrompu par {signal} ; la vérification a été arrêtée et aucun rapport n'a été écrit.",
    # -- le --help de la vérification (commands/check.py ; affiché en anglais, toujours) -----------
    "check.help.description":
        "Trouve la première couche d'une installation PyTorch avec GPU qui échoue : interpréteur "
        "et import, backend du build, périphérique, un petit calcul vérifié. Sans commande, "
        "{tool} lance cette vérification ; une commande donnée en premier s'exécute à sa place "
        "(chacune a son --help).",
    "check.help.epilog.codes":
        "codes de résultat : le code du rapport et le code de sortie (nom, code de sortie, "
        "signification) :",
    "check.help.epilog.process":
        "codes de sortie du processus seul, jamais le code d'un rapport :",
    "check.help.epilog.output":
        "sortie :\n"
        "  --output FILE est écrit d'abord, puis la sortie standard. Si la sortie standard est "
        "fermée ou\n"
        "  refuse les octets (un périphérique plein), le code de sortie est 15 "
        "(STDOUT_WRITE_FAILED) et le\n"
        "  fichier demandé est tout de même enregistré ; un lecteur qui s'en va (| head) n'est pas "
        "un\n"
        "  échec. Si le fichier ne peut pas être écrit, le code de sortie est 12 "
        "(OUTPUT_WRITE_FAILED), et\n"
        "  la première ligne du texte le dit. Les rapports JSON et markdown gardent le code et le "
        "code de\n"
        "  sortie propres à la vérification.\n"
        "  --output - est refusé (sortie 2) : le rapport JSON sur la sortie standard, c'est "
        "--format json ;\n"
        "  un fichier vraiment nommé '-' s'écrit ./-\n"
        "  Avec TERM=dumb ou NO_COLOR, pas de couleur ; avec TERM=dumb la ligne de progression sur "
        "stderr\n"
        "  n'utilise aucune séquence d'échappement (seulement un retour chariot et des espaces).",
    "check.help.device": "où lancer la vérification (gpu par défaut ; cpu seulement sur demande)",
    "check.help.device_index": "indice du GPU parmi les périphériques visibles (0 par défaut)",
    "check.help.timeout":
        "limite pour toute la vérification, {low}-{high} secondes ({default} par défaut ; "
        "{kernels} avec --kernels)",
    "check.help.output": "écrit aussi le rapport JSON dans FILE, qui ne doit pas encore exister",
    "check.help.host_check":
        "demande aussi à nvidia-smi (ou amd-smi, rocm-smi) le pilote et la mémoire, 3 s au plus",
    "check.help.distributed":
        "sous torchrun ou srun de Slurm : vérifie le périphérique de ce rang (son rang local), "
        "puis une collective (all-reduce, barrier) sur tous les rangs ; le rang 0 affiche le "
        "rapport du job. --output peut contenir {{rank}} : chaque rang écrit alors son propre "
        "rapport (voir docs/scale.md)",
    "check.help.all_devices":
        "vérifie chaque GPU visible en une seule exécution, chacun avec son propre résultat, et "
        "une copie vérifiée entre chaque paire ; le code est celui du GPU d'indice le plus bas "
        "qui a échoué",
    "check.help.extensions":
        "importe aussi chaque extension de torch installée (torchvision, flash-attn...), chacune "
        "bornée, et vérifie le torch qu'elle déclare ; un échec est EXTENSION_FAILED (voir "
        "docs/libraries.md)",
    "check.help.kernels":
        "vérifie aussi, sur le même périphérique, des produits de matrices "
        "float16/bfloat16/TF32, une convolution, l'attention, torch.compile et (GPU) une copie "
        "hôte-périphérique ; sa limite est de 120 s sauf autre --timeout",
    "check.help.python":
        "diagnostique un autre interpréteur (celui d'un noyau de notebook, d'un service, d'un "
        "venv) sans rien y installer",
    "check.help.format":
        "ce qui va sur la sortie standard (text par défaut) ; --output est toujours en JSON",
    "check.help.lang":
        "langue du texte (par défaut selon LC_ALL, LC_MESSAGES, LANG) ; le JSON reste en anglais",
    "check.help.show_paths":
        "affiche aussi où se trouvent l'interpréteur et torch, sur ce terminal seulement (jamais "
        "dans un rapport)",
    # -- toutes les commandes (la vérification, compare, summarize) ------------------------------
    "command.interrupted": "interrompu par {signal}.",
    "command.internal_error":
        "erreur interne ({detail}) ; merci de la signaler en indiquant la commande exécutée.",
    "command.help.debug": "affiche une trace d'appels si l'outil lui-même échoue",

    # -- compare and summarize (reports read back; JSON output keeps ids, not these texts) -------
    "reports.reason.not_found": "introuvable",
    "reports.reason.not_a_file": "pas un fichier ordinaire",
    "reports.reason.permission": "permission refusée",
    "reports.reason.unreadable": "illisible",
    "reports.reason.not_json": "pas du JSON",
    "reports.reason.schema_version":
        "version de schéma {version} (cette version de l'outil lit la version 1)",
    "reports.reason.not_a_report": "pas un rapport",
    "reports.reason.too_large": "trop grand pour être un rapport (plus de {limit})",
    "reports.reason.link_not_followed":
        "un lien vers un dossier, non suivi (ce qu'il contient n'est pas lu)",
    "reports.help.format":
        "format de sortie : text (par défaut), json ou markdown (à coller dans un ticket)",
    "reports.help.lang": "langue de la sortie texte et markdown (par défaut ici : {default})",
    "compare.help.description":
        "Montre ce qui a changé entre deux rapports de la vérification : code, étape, versions, "
        "périphériques, constats et durées par étape (une durée compte quand elle a bougé de 100 "
        "ms et de 20 pour cent ou plus). Le statut de sortie est le verdict : 0 le même, 20 "
        "changé, 21 une régression (ce qui passait échoue, une tentative qui n'aboutit plus, un "
        "contrat qui échoue ou a disparu) ; 2 quand un fichier n'est pas un rapport lisible, 15 "
        "quand la sortie standard refuse le résultat. Deux tentatives du trial (leurs dossiers, "
        "fichiers attempt.json, ou un dossier avec seulement events.jsonl) se comparent de même, "
        "par leur statut : paramètres, versions, dernière étape, première erreur, contrats, "
        "mémoire et durée par étape (la passe la plus lente nommée).",
    "compare.help.a":
        "le rapport précédent (le JSON écrit avec --output), ou la tentative du trial",
    "compare.help.b": "le rapport suivant, ou la tentative du trial",
    "compare.argument": "{which} ({name}) : {reason}",
    "compare.cannot_read": "comparaison impossible : {what}",
    "trial.adapter.framework_missing":
        "{name} n'est pas installé : cet adaptateur demande {name} {minimum} ou plus récent "
        "({install})",
    "trial.adapter.framework_too_old":
        "{name} {found} est trop ancien : cet adaptateur demande {name} {minimum} ou plus "
        "récent ({install})",
    "compare.same_code": "même code : {code}",
    "compare.code_changed": "le code a changé : {a} -> {b}",
    "compare.same_status": "même statut : {code}",
    "compare.status_changed": "le statut a changé : {a} -> {b}",
    "compare.mixed": "{a} est un rapport de la vérification et {b} une tentative du trial : "
                     "comparez deux du même type",
    "compare.nothing_else": "rien d'autre n'a changé",
    "compare.header.field": "champ",
    "compare.findings_added": "constats apparus dans B : {ids}",
    "compare.findings_removed": "constats disparus dans B : {ids}",
    "compare.regression":
        "régression : {what}",
    "compare.regression.passed_to_failed":
        "A a réussi ({a}), B a échoué ({b})",
    "compare.regression.passed_to":
        "A a réussi, B {b} : {why}",
    "compare.regression.stage_stopped":
        "étape {stage} : {a} appels terminés dans A, {b} dans B",
    "compare.regression.contract_failing":
        "le contrat {name} passait dans A, échoue dans B",
    "compare.regression.contract_lost":
        "le contrat {name} passait dans A, manque dans B",
    "compare.regression.contract_new_failing":
        "le contrat {name} échoue dans B (non vérifié dans A)",
    "compare.last_started":
        "dernière étape commencée dans {which} : {stage}",
    "compare.last_started_pass":
        "dernière étape commencée dans {which} : {stage} (passe {index})",
    "summarize.help.description":
        "Résume de nombreux rapports de la vérification, par exemple collectés sur plusieurs "
        "machines : d'abord les jobs des rapports de --distributed (le verdict du job, celui de "
        "chaque rang, les rangs jamais signalés), une ligne par rapport, puis le nombre de chaque "
        "code, du pire au meilleur, puis les fichiers qui ne sont pas des rapports lisibles, avec "
        "la raison.",
    "summarize.help.paths":
        "un fichier de rapport, ou un dossier parcouru récursivement à la recherche de *.json",
    "summarize.help.epilog": "Ordre des codes, du pire au meilleur : {order}.",
    "summarize.header.report": "rapport",
    "summarize.header.code": "code",
    "summarize.header.exit": "sortie",
    "summarize.header.stage": "étape",
    "summarize.header.python": "python",
    "summarize.header.torch": "torch",
    "summarize.header.backend": "backend",
    "summarize.header.devices": "périphériques",
    "summarize.header.count": "nombre",
    "summarize.counts": "nombre par code, du pire au meilleur",
    "summarize.unreadable": "illisibles ({count})",
    "summarize.jobs": "jobs : le verdict du job, puis celui de chaque rang",
    "summarize.job": "job {job} ({launcher}, {world_size} rang(s)) : {status}, {code}",
    "summarize.job.run": "{job}, exécution {run} sur {runs}",
    "summarize.job.passed": "réussi",
    "summarize.job.failed": "échoué",
    "summarize.job.incomplete": "incomplet",
    "summarize.job.never_reported": "jamais signalé : rang(s) {ranks}",
    "summarize.job.world_sizes":
        "les rapports ne s'accordent pas sur le nombre de rangs (world size) : {sizes}",
    "summarize.header.rank": "rang",
    "summarize.header.node": "nœud",
    "summarize.job.in_rank_0": "dans le rapport du rang 0",
    "summarize.job.no_report": "jamais signalé",
    "summarize.job.stopped": "{file} (arrêté par le lanceur)",
    "summarize.every_device":
        "périphériques de --all-devices : le verdict de chaque rapport, puis celui de chaque "
        "périphérique et des copies",
    "summarize.every_device.copies": "copies",
    "summarize.header.device": "périphérique",
    "summarize.header.step": "étape",
    "summarize.unreadable.line": "illisibles : {count} fichier(s), {kinds}",
    "summarize.unreadable.hint": "(--list-unreadable les liste)",
    "summarize.help.list_unreadable":
        "lister chaque fichier qui n'est pas un rapport lisible, avec la raison (par défaut : une "
        "ligne avec leur nombre et leurs sortes)",
    "summarize.total":
        "{files} fichier(s) : {reports} rapport(s), {passed} réussi(s), {failed} en échec, "
        "{unreadable} illisible(s)",
    "summarize.attempts":
        "tentatives du trial et du ramp",
    "summarize.attempts_total":
        "{attempts} tentative(s) : {passed} réussies, {failed} échouées, {ramp} d'un ramp (non "
        "comptées)",
    "summarize.header.attempt":
        "tentative",
    "summarize.header.status":
        "statut",
    "summarize.header.error_stage":
        "étape de la première erreur",
    "summarize.header.contracts":
        "contrats",
    "summarize.header.peak":
        "pic mémoire",
    "summarize.header.last_started":
        "dernière étape commencée",
    "summarize.help.only":
        "n'afficher que les rapports en échec, tous, un par ligne (pour les scripts)",
    "summarize.help.part":
        "ces rapports sont une partie d'une flotte (xargs) : les rangs absents d'un job peuvent "
        "être dans une autre partie (non concluant, pas incomplet)",
    "summarize.help.prometheus":
        "écrire aussi les comptes en métriques Prometheus dans FICHIER (*.prom, remplacé "
        "atomiquement)",
    "summarize.prometheus_suffix":
        "--prometheus : le nom du fichier doit finir par .prom (node_exporter ne lit que ceux-là)",
    "summarize.stdin_twice":
        "- (l'entrée standard) ne peut être donné qu'une fois",
    "summarize.job.in_part":
        "partiel (ses autres rangs peuvent être dans une autre partie)",
    "summarize.job.not_among":
        "absents de ces rapports : rang(s) {ranks}",
    "summarize.job.stop.time_limit":
        "arrêtés par le lanceur, limite de temps Slurm du job : rang(s) {ranks} (pas leur échec)",
    "summarize.job.stop.cancelled":
        "arrêtés par le lanceur, job annulé (scancel) : rang(s) {ranks} (pas leur échec)",
    "summarize.job.stop.sigterm":
        "arrêtés par le lanceur (SIGTERM) : rang(s) {ranks} (pas leur échec)",
    "summarize.fleet.groups":
        "rapports en échec par code, étape et cause (les {few} premiers de chacun nommés)",
    "summarize.fleet.group":
        "{code}  {stage}  {cause} : {count}",
    "summarize.fleet.more":
        "… et {count} de plus (--only failed les liste tous)",
    "summarize.fleet.more_groups":
        "… et {groups} groupe(s) de plus, {count} rapport(s)",
    "summarize.fleet.jobs":
        "jobs : {jobs}, {passed} réussi(s) ; ceux qui n'ont pas réussi :",
    "summarize.fleet.jobs_all_passed":
        "jobs : {jobs}, tous réussis",
    "summarize.fleet.rank":
        "rang {rank} : {code} ({file})",
    "summarize.fleet.more_jobs":
        "… et {count} job(s) de plus qui n'ont pas réussi (--format json)",
    "summarize.fleet.every_device":
        "rapports --all-devices qui n'ont pas réussi : {count}",
    "summarize.nothing_found": "aucun fichier à lire dans les chemins donnés",
    # -- ramp (docs/operating-range.md) ; les issues restent des ids (passed, out_of_memory...) -
    "ramp.help.description":
        "Augmente un seul axe de votre application (batch, longueur, concurrence, processus) "
        "jusqu'à l'échec, un processus par tentative, et enregistre la plage de fonctionnement "
        "mesurée : ramp.json, ramp.md et, avec matplotlib, ramp.png dans --out. Donnez la "
        "commande de l'application après -- ; {{NAME}} y est remplacé par la valeur.",
    "ramp.help.epilog":
        "Chaque tentative reçoit aussi KERNODECK_AXIS_NAME, KERNODECK_AXIS_VALUE et "
        "KERNODECK_RUN_DIR (où un Trial place son dossier de tentative). Relancez la même commande "
        "avec le même --out pour reprendre : une tentative enregistrée n'est jamais refaite. Quand "
        "la sortie standard est fermée ou refuse le résultat, l'enregistrement est dans --out "
        "malgré tout.",
    "ramp.help.axis": "le nom de l'axe, comme le marqueur {{NAME}} de la commande",
    "ramp.help.start": "la première valeur (un entier, au moins 1)",
    "ramp.help.stop": "la plus grande valeur à essayer",
    "ramp.help.factor": "facteur de croissance entre deux valeurs (2 par défaut)",
    "ramp.help.bisect":
        "après le premier échec, bissecter entre la dernière réussite et lui, à l'entier près",
    "ramp.help.attempt_timeout": "limite de temps d'une tentative, en secondes (600 par défaut)",
    "ramp.help.out":
        "dossier des fichiers de la rampe (runs/ramp-NAME par défaut) ; le même reprend",
    "ramp.no_command": "donnez la commande de l'application après -- (ex. : -- python app.py)",
    "ramp.bad_axis": "--axis {axis} : un nom de lettres, chiffres et _ (ex. : batch)",
    "ramp.bad_range": "--start {start} --stop {stop} : il faut 1 <= start <= stop",
    "ramp.bad_factor": "--factor {factor} : doit être supérieur à 1",
    "ramp.bad_timeout": "--attempt-timeout {timeout} : doit être un nombre positif de secondes",
    "ramp.bad_out": "--out ne peut pas contenir la rampe : {reason}",
    "ramp.other_ramp":
        "--out contient une rampe aux autres réglages ({settings}) ; choisissez un autre --out, "
        "ou relancez la même commande pour la reprendre",
    "ramp.resuming":
        "reprise : {count} tentative(s) déjà enregistrée(s) dans ramp.json ne sont pas refaites",
    "ramp.progress":
        "[{index}] {axis}={value} : {outcome} en {duration} s, pic de mémoire {peak}",
    "ramp.header.value": "{axis}",
    "ramp.header.outcome": "issue",
    "ramp.header.duration": "durée",
    "ramp.header.peak": "pic de mémoire",
    "ramp.header.detail": "détail",
    "ramp.range":
        "{axis} : {passed} ont réussi{between} ; dernière réussite {last}, premier échec "
        "{first} ({kind})",
    "ramp.all_passed":
        "{axis} : {passed} ont réussi{between} ; aucun échec jusqu'à {value} (aucune limite "
        "trouvée)",
    "ramp.none_passed": "{axis} : la première valeur, {value}, a déjà échoué ({kind})",
    "ramp.written": "écrits dans le dossier --out : {files}",
    "ramp.no_plot":
        "pas de graphique : matplotlib n'est pas installé dans le Python qui lance cette commande "
        "(installez-le là : python -m pip install matplotlib, avec ce Python)",
    "ramp.plot.duration": "durée (s)",
    "ramp.plot.memory": "pic de mémoire (Mio)",
    "ramp.interrupted":
        "interrompu par {signal} ; la tentative en cours a été arrêtée, ramp.json conservé : "
        "relancez la même commande pour reprendre.",
    # -- resume-check ------------------------------------------------------------------------------
    "resume.help.description":
        "Exécute votre application, l'arrête quand le registre contient N enregistrements (ou "
        "après S secondes), la relance jusqu'au bout, puis vérifie le registre : chaque id attendu "
        "exactement une fois, chaque ligne un enregistrement entier, chaque enregistrement ce "
        "qu'il doit être. Ou vérifie un registre tel quel (--verify-ledger). Sortie 0 seulement "
        "quand une reprise a été prouvée et que rien n'est perdu, dupliqué ou mauvais.",
    "resume.help.ledger":
        "le registre des sorties de l'application (JSON Lines ; ne doit pas encore exister)",
    "resume.help.stop_after_records":
        "arrêter la première exécution quand le registre contient N enregistrements",
    "resume.help.stop_after": "arrêter la première exécution après ce nombre de secondes",
    "resume.help.expect_ids":
        "fichier des ids attendus, un par ligne (par défaut : expected_ids de l'en-tête du "
        "registre)",
    "resume.help.grace":
        "secondes entre SIGINT et SIGTERM, et entre SIGTERM et SIGKILL (10 par défaut)",
    "resume.help.timeout":
        "limite de temps de chaque exécution, et de la vérification des enregistrements, en "
        "secondes (3600 par défaut)",
    "resume.not_positive": "{option} doit être un nombre positif",
    "resume.ledger_exists":
        "le registre existe déjà : la vérification part d'un registre vide (déplacez-le)",
    "resume.unsafe_ledger": "--ledger inutilisable : {reason}",
    "files.unsafe.link":
        "un lien symbolique appartenant à un autre utilisateur est sur le chemin (refusé, "
        "jamais suivi)",
    "files.unsafe.owner": "le dossier appartient à un autre utilisateur",
    "files.unsafe.writable":
        "d'autres utilisateurs peuvent écrire dans le dossier, qui n'a pas de bit sticky",
    "files.unsafe.not_folder": "pas un dossier",
    "files.unsafe.not_file": "pas un fichier ordinaire",
    "files.unsafe.file_owner": "le fichier appartient à un autre utilisateur",
    "files.unsafe.hard_link": "le fichier a d'autres liens physiques",
    "resume.bad_expect_ids": "--expect-ids illisible : {reason}",
    "resume.first_run":
        "première exécution arrêtée avec {records} enregistrement(s) dans le registre ({remaining} "
        "id(s) attendu(s) restant(s)) ; relance",
    "resume.not_stopped":
        "la première exécution s'est terminée seule (sortie {exit}) avant l'arrêt ; relance",
    "resume.intact": "REPRISE OK : rien de perdu, rien de compté deux fois",
    "resume.not_intact": "REPRISE EN ÉCHEC (sortie {exit}, {code})",
    "resume.second_failed": "la seconde exécution s'est mal terminée (sortie {exit}) : {error}",
    "resume.expected": "{count} id(s) attendu(s)",
    "resume.lost": "perdus ({count}) : {ids}",
    "resume.duplicated": "dupliqués ({count}) : {ids}",
    "resume.unexpected": "non attendus ({count}) : {ids}",
    "resume.half_records": "enregistrements à moitié écrits ({count}) à la/aux ligne(s) : {lines}",
    "code.SUMMARY_ALL_PASSED.summary":
        "Tous les rapports ont réussi et tous les fichiers ont été lus.",
    "code.SUMMARY_ALL_PASSED.next_action": "Rien à faire.",
    "code.SUMMARY_SOME_FAILED.summary":
        "Un rapport a échoué, un job est incomplet, ou un fichier n'est pas un rapport lisible.",
    "code.SUMMARY_SOME_FAILED.next_action":
        "Lisez les rapports en échec et les rangs des jobs qui n'ont jamais signalé ; "
        "--list-unreadable nomme les fichiers illisibles.",
    "code.SUMMARY_NOTHING_READ.summary": "Aucun rapport lisible trouvé dans les chemins donnés.",
    "code.SUMMARY_NOTHING_READ.next_action":
        "Vérifiez les chemins : des fichiers de rapport, ou des dossiers qui en contiennent.",
    "code.RAMP_RANGE_MEASURED.summary":
        "Au moins une valeur a réussi : la plage de fonctionnement a été mesurée.",
    "code.RAMP_RANGE_MEASURED.next_action": "Restez sous le premier échec (ramp.md).",
    "code.RAMP_NOTHING_PASSED.summary":
        "Même la première valeur a échoué : un échec du programme lui-même.",
    "code.RAMP_NOTHING_PASSED.next_action":
        "Commencez plus bas, ou lisez le stderr.txt de la première tentative.",
    "code.RAMP_INCONCLUSIVE.summary":
        "Rien n'a été mesuré : aucune tentative n'a exécuté le programme, l'axe n'a rien "
        "changé, ou la première valeur qui n'a pas réussi était non concluante.",
    "code.RAMP_INCONCLUSIVE.next_action":
        "Vérifiez la commande après -- et que le programme utilise la valeur (les paramètres de "
        "son Trial).",
    "code.RESUME_INTACT.summary":
        "Arrêté avec du travail restant et repris : chaque id attendu une fois, chaque "
        "enregistrement entier et valide.",
    "code.RESUME_INTACT.next_action": "Rien à faire.",
    "code.RESUME_RECORDS_LOST.summary":
        "Des ids attendus n'ont pas d'enregistrement après la reprise.",
    "code.RESUME_RECORDS_LOST.next_action":
        "Rendez chaque enregistrement durable avant de le compter comme fait (OutputLedger).",
    "code.RESUME_RECORDS_DUPLICATED.summary":
        "Des ids ont été écrits plus d'une fois, ou refaits : réécrits par la seconde exécution "
        "alors que le registre les contenait à l'arrêt.",
    "code.RESUME_RECORDS_DUPLICATED.next_action":
        "Sautez les ids déjà dans le registre au démarrage du programme (done_ids).",
    "code.RESUME_BAD_RECORD.summary":
        "Une ligne n'est pas un enregistrement entier, ou un enregistrement enfreint ses règles "
        "(dimension, valeurs finies, --record-check), ou son id n'était pas attendu.",
    "code.RESUME_BAD_RECORD.next_action": "Voyez les lignes et les ids nommés.",
    "code.RESUME_INCONCLUSIVE.summary":
        "Rien n'a été prouvé : pas arrêté avec du travail restant, une seconde exécution sans rien "
        "à faire, ou aucun id attendu.",
    "code.RESUME_INCONCLUSIVE.next_action":
        "Arrêtez-le plus tôt, donnez-lui plus de travail, ou donnez les ids attendus.",
    "code.RESUME_RUN_FAILED.summary":
        "Une exécution du programme a échoué pour une autre raison (son code de sortie, la limite "
        "de temps).",
    "code.RESUME_RUN_FAILED.next_action": "Lisez la dernière ligne d'erreur de l'exécution nommée.",
    "code.HEALTH_PASSED.summary": "Chaque GPU de ce nœud a passé la vérification.",
    "code.HEALTH_PASSED.next_action": "Rien à faire.",
    "code.HEALTH_NODE_FAULT.summary":
        "Un GPU de ce nœud ou son pilote a échoué à la vérification : inutilisable, un résultat"
        " faux, une erreur du backend.",
    "code.HEALTH_NODE_FAULT.next_action":
        "Retirez le nœud du service (--slurm le fait) et vérifiez le GPU nommé.",
    "code.HEALTH_ENVIRONMENT_FAULT.summary":
        "Le logiciel a échoué, pas le nœud : PyTorch absent, cassé ou sans backend GPU, ou les "
        "périphériques cachés par un réglage.",
    "code.HEALTH_ENVIRONMENT_FAULT.next_action":
        "Corrigez l'image ou le venv de la vérification ; ne retirez pas le nœud pour cela.",
    "code.HEALTH_INCONCLUSIVE.summary":
        "Rien n'est prouvé sur le nœud : la limite de temps (un nœud occupé), de la mémoire "
        "tenue par un job, ou une vérification finie sans résultat.",
    "code.HEALTH_INCONCLUSIVE.next_action":
        "Relancez-la quand le nœud est libre ; ne retirez pas le nœud pour cela.",
    "cli.command.health-check":
        "les GPU d'un nœud vérifiés pour Slurm, NHC ou node-problem-detector",
    "health.help.description":
        "La vérification de chaque GPU de ce nœud, pour le contrôle de santé d'un nœud : à qui "
        "est la faute (au nœud, à l'environnement, ou rien de prouvé), une ligne de raison, un "
        "code de sortie que l'hôte comprend, et avec --slurm le nœud retiré ou remis en "
        "service.",
    "health.help.epilog":
        "Profils de sortie : native (les codes ci-dessous), npd (node-problem-detector : 0 OK, "
        "1 un problème, 2 inconnu), prolog (un prologue Slurm ou NHC : 1 pour la seule faute du"
        " nœud, sinon 0, pour qu'un bogue de l'outil ne retire jamais un nœud).",
    "health.help.timeout":
        "secondes que toute la vérification peut prendre, 5-120 (défaut {default})",
    "health.help.python": "l'interpréteur à vérifier (défaut : celui-ci)",
    "health.help.output": "écrire aussi le rapport JSON de la vérification dans ce nouveau fichier",
    "health.help.prometheus":
        "écrire le verdict en métriques Prometheus dans ce fichier *.prom (remplacé "
        "atomiquement)",
    "health.help.slurm":
        "retirer ce nœud pour sa propre faute, le remettre en service après un succès seulement"
        " si cette commande l'a retiré",
    "health.help.node":
        "le nom du nœud Slurm (défaut : SLURMD_NODENAME, sinon le nom d'hôte court)",
    "health.help.exit_profile": "les codes de sortie : native, npd ou prolog (voir plus bas)",
    "health.help.format": "text (défaut) ou json (un objet)",
    "health.timeout_range": "--timeout doit être entre {low} et {high} secondes",
    "metrics.suffix":
        "--prometheus : le collecteur textfile de node_exporter ne lit que les fichiers "
        "finissant par {suffix}",
    "metrics.not_saved": "{what} n'a pas été enregistré : {reason}",
    "health.fault.passed": "SAIN",
    "health.fault.node": "FAUTE DU NŒUD",
    "health.fault.environment": "ENVIRONNEMENT",
    "health.fault.inconclusive": "NON CONCLUANT",
    "health.next.node": "le GPU ou son pilote a échoué : retirez le nœud et vérifiez le GPU nommé",
    "health.next.environment":
        "le logiciel a échoué, pas le nœud : corrigez l'image ou le venv ; le nœud n'est pas "
        "retiré",
    "health.next.inconclusive": "rien de prouvé sur le nœud : relancez quand il est libre",
    "health.slurm.drained": "nœud retiré du service avec cette raison",
    "health.slurm.already_drained": "déjà retiré avec cette raison : laissé tel quel",
    "health.slurm.resumed": "nœud remis en service (cette commande l'avait retiré)",
    "health.slurm.left_operator_drain":
        "le nœud est retiré pour une autre raison (celle d'un opérateur) : laissé tel quel",
    "health.slurm.not_drained": "non retiré : pas la faute du nœud",
    "health.slurm.nothing": "rien à faire",
    "health.slurm.unknown_node": "scontrol ne connaît pas ce nœud : rien de fait (--node NOM)",
    "health.slurm.scontrol_failed": "scontrol update a échoué : rien de fait",
    "health.passed": "{code} : {count} GPU vérifié(s)",
    "check.help.prometheus":
        "écrit aussi le verdict en métriques Prometheus dans FILE (*.prom, remplacé atomiquement)",
    "command.help.statuses": "codes de sortie (nom, code de sortie, sens) :",
    "command.help.process_statuses": "comment le processus s'est terminé autrement :",
    "check.help.epilog.commands":
        "commandes (le premier argument ; aucune lance la vérification) :",
    "cli.command.check":
        "la vérification : la première couche d'une installation PyTorch GPU qui échoue",
    "cli.command.compare": "ce qui a changé entre deux rapports, ou deux tentatives de trial",
    "cli.command.summarize":
        "beaucoup de rapports d'un coup d'œil : une ligne chacun, le compte de chaque code",
    "cli.command.ramp":
        "la plage de fonctionnement de votre programme : un axe augmenté jusqu'à l'échec",
    "cli.command.resume-check":
        "arrête votre programme, le relance : aucune sortie perdue ni écrite deux fois",
    "cli.unknown_command":
        "commande inconnue {word} : les commandes sont {commands}, ou aucune pour la vérification",
    "cli.unknown_command.near": "commande inconnue {word} : vouliez-vous dire {command} ?",
    "ramp.help.value_from_env":
        "le programme lit sa valeur dans KERNODECK_AXIS_VALUE : la commande n'a pas besoin de "
        "{{NAME}}",
    "ramp.no_placeholder":
        "la commande ne contient jamais {placeholder}, donc chaque tentative exécuterait la même "
        "commande{found} ; mettez {placeholder} là où va la valeur, ou donnez --value-from-env si "
        "le programme lit KERNODECK_AXIS_VALUE",
    "ramp.placeholder_found": " (elle contient {found})",
    "ramp.never_started":
        "{axis} : le programme n'a jamais démarré ({error}) : rien n'a été mesuré",
    # Issue 41: one judge; what a ramp measured, said whole.
    "ramp.between_not_tried":
        " (les valeurs intermédiaires n'ont pas été essayées)",
    "ramp.no_single_limit":
        "{axis} : pas de limite unique : {failed} ont échoué sous une valeur qui a réussi "
        "({passed} ont réussi){between}",
    "ramp.flaky":
        "{axis} : instable : {values} ont réussi et échoué ; aucune limite ne peut être donnée",
    "ramp.axis_ignored":
        "{axis} : {why} ; rien n'a été mesuré",
    "ramp.inconclusive_at":
        "{axis} : {passed} ont réussi ; à {value}, non concluant ({why}) : limite inconnue",
    "ramp.unfinished":
        "{axis} : la rampe n'est pas allée à son terme ; {passed} ont réussi jusqu'ici",
    "ramp.program_changed":
        "les fichiers du programme ont changé depuis l'écriture du ramp.json de --out ({files}) "
        ": ses tentatives seraient périmées ; choisissez un autre --out, ou supprimez ramp.json "
        "pour recommencer",
    "ramp.help.repeat":
        "exécuter la dernière valeur réussie et la première en échec N fois en tout (défaut 1) "
        ": une valeur qui a réussi et échoué est instable",
    "ramp.bad_repeat":
        "--repeat {repeat} : donnez un nombre de 1 à 100",
    "code.RAMP_NO_SINGLE_LIMIT.summary":
        "Une valeur a échoué sous une valeur qui a réussi : il n'y a pas de limite unique.",
    "code.RAMP_NO_SINGLE_LIMIT.next_action":
        "Lisez les dossiers des tentatives en échec : l'échec dépend d'autre chose que de l'axe.",
    "code.RAMP_FLAKY.summary":
        "Une valeur a réussi et échoué (--repeat) : la limite est instable.",
    "code.RAMP_FLAKY.next_action":
        "Relancez les valeurs instables, et restez bien en dessous.",
    "code.SUMMARY_INCONCLUSIVE.summary":
        "Rien n'a échoué, mais une tentative ou une rampe n'a pas pu être jugée (elle n'est pas "
        "allée à son terme, ou rien n'a été mesuré).",
    "code.SUMMARY_INCONCLUSIVE.next_action":
        "Lisez les lignes non concluantes : relancez-les jusqu'au bout.",
    "summarize.inconclusive":
        "{count} tentative(s) ou rampe(s) non concluante(s) : aucune preuve de réussite",
    "resume.help.verify_ledger":
        "vérifie ce registre tel quel (un job vraiment arrêté), sans rien exécuter",
    "resume.help.stop_signal":
        "comment la première exécution est arrêtée : SIGKILL tout de suite, comme une préemption "
        "ou l'OOM killer (par défaut : un arrêt brutal prouve que ce que le programme comptait "
        "fait était sur le disque) ; SIGINT comme Ctrl-C, puis SIGTERM, puis SIGKILL, à --grace "
        "d'intervalle ; ou SIGTERM, puis SIGKILL",
    "resume.help.record_check":
        "une fonction importée depuis le dossier courant (comme python -m), appelée comme "
        "FUNCTION(record_id, record) sur chaque enregistrement : un enregistrement échoue quand "
        "elle lève une exception ou renvoie False",
    "resume.run_only": "{option} sert à une exécution du programme, pas à --verify-ledger",
    "resume.verify_no_command":
        "--verify-ledger n'exécute rien : ne donnez pas de commande après --",
    "resume.no_stop":
        "donnez --stop-after-records N ou --stop-after SECONDS : quand arrêter la première "
        "exécution",
    "resume.bad_record_check_spec":
        "--record-check {spec} : donnez MODULE:FUNCTION (par exemple checks:unit_norm)",
    "resume.bad_record_check": "--record-check {spec} inutilisable : {reason}",
    "resume.bad_verify_ledger": "--verify-ledger illisible : {reason}",
    "resume.ledger_preflight":
        "impossible d'utiliser le registre demandé : {reason}. Rien n'a été exécuté (code de "
        "sortie {exit}).",
    "resume.inconclusive_head": "REPRISE NON CONCLUANTE (sortie {exit}, {code})",
    "resume.first_failed":
        "la première exécution a échoué avant d'être arrêtée (sortie {exit}) : {error}",
    "resume.inconclusive.no_expected_ids":
        "aucun id attendu (donnez --expect-ids, ou expected_ids à OutputLedger) : les ids perdus "
        "ne peuvent pas être vérifiés",
    "resume.inconclusive.never_stopped":
        "la première exécution s'est terminée seule avant l'arrêt : rien n'a été repris "
        "(arrêtez-la plus tôt)",
    "resume.inconclusive.stopped_before_any_record":
        "la première exécution a été arrêtée avant d'écrire le moindre enregistrement : il n'y "
        "avait rien à sauter, donc aucune reprise n'a été éprouvée (arrêtez-la plus tard)",
    "resume.inconclusive.first_run_finished":
        "la première exécution avait fini son travail quand elle s'est terminée : {records} "
        "enregistrement(s), plus aucun id attendu ; rien n'a été repris (arrêtez-la plus tôt, ou "
        "donnez-lui plus de travail)",
    "resume.inconclusive.second_run_idle":
        "la seconde exécution s'est bien terminée sans écrire aucun enregistrement : aucune "
        "reprise n'a été éprouvée",
    "resume.inconclusive.record_check_unfinished":
        "la vérification des enregistrements n'a pas abouti ({error}) : ceux qu'elle n'a pas vus "
        "ne sont pas vérifiés",
    "resume.misplaced_header":
        "l'en-tête du registre est à la ligne {line}, pas à la ligne 1 : ses ids attendus ne sont "
        "pas utilisés",
    "resume.not_records": "pas des enregistrements ({count}) à la/aux ligne(s) : {lines}",
    "resume.not_record.binary": "octets binaires, pas du texte UTF-8",
    "resume.not_record.not_json": "du texte qui n'est pas du JSON",
    "resume.not_record.no_id": "du JSON sans id",
    "resume.bad_records": "enregistrements mauvais ({count}) : {ids}",
    "resume.intact_after_stop":
        "REPRISE OK après un arrêt par {signal} : rien de perdu, rien de refait, rien de compté "
        "deux fois",
    "resume.stopped_by":
        "la première exécution a été arrêtée par {signal} avec {records} enregistrement(s) dans "
        "le registre ({remaining} id(s) attendu(s) restant(s))",
    "resume.first_time_limit":
        "la première exécution a été arrêtée par sa limite de temps ({timeout} s, --timeout) "
        "avant l'arrêt",
    "resume.second_time_limit":
        "la seconde exécution a été arrêtée par sa limite de temps ({timeout} s, --timeout) : "
        "elle était bloquée (un verrou périmé, une attente sans fin) ou il lui faut plus de temps",
    "resume.refused_duplicate":
        "le registre a refusé un id qu'il contenait déjà : le programme ne saute pas les ids de "
        "done_ids() au démarrage",
    "resume.rewrote":
        "la seconde exécution n'a pas gardé le registre tel que l'arrêt l'a laissé (tronqué ou "
        "remplacé) : elle a tout recommencé au lieu de reprendre",
    "resume.redone":
        "refaits ({count}) : dans le registre à l'arrêt, réécrits par la seconde exécution : {ids}",
    "resume.gentle_stop":
        "{signal} est un arrêt en douceur : le programme a pu écrire ce qu'il gardait encore ; "
        "éprouvez aussi la reprise après un arrêt brutal (--stop-signal SIGKILL, par défaut)",
    "resume.no_record_check":
        "seules les lignes du registre ont été vérifiées : quand chaque id a sa propre sortie (un "
        "fichier écrit après append), vérifiez-la avec --record-check MODULE:FONCTION "
        "(examples/resume_record_check.py)",
    # -- the tool's own needs (issue 44: supervision/tool_needs.py) -----------------------------
    "code.TOOL_RESOURCES.summary":
        "L'outil n'a pas obtenu ce dont il a besoin des limites de ce processus (fichiers "
        "ouverts, processus, mémoire) : rien n'est conclu sur la machine.",
    "code.TOOL_RESOURCES.next_action":
        "Relevez la limite que l'erreur nomme, comme elle l'indique, et relancez la vérification.",
    "error.tool_needs.open_files":
        "l'outil a manqué de fichiers ouverts pendant {at} : ce processus peut en ouvrir {limit} "
        "(ulimit -n), moins qu'il ne lui en faut ; lancez d'abord `ulimit -n {suggested}`, puis "
        "vérifiez à nouveau",
    "error.tool_needs.open_files_system":
        "l'outil a manqué de fichiers ouverts pendant {at} : la table des fichiers ouverts du "
        "système est pleine (fs.file-max) ; fermez des programmes ou relevez-la, puis vérifiez à "
        "nouveau",
    "error.tool_needs.processes":
        "le système a refusé à l'outil un processus ou un thread pendant {at} : la limite de "
        "processus (ulimit -u, pids.max d'un cgroup) est atteinte ; autorisez-en au moins "
        "{suggested} de plus (`ulimit -u`, pids.max), puis vérifiez à nouveau",
    "error.tool_needs.memory":
        "le worker a été tué par l'OOM killer du noyau pendant {at} : le cgroup mémoire de la "
        "vérification autorise {limit} Mo (memory.max), que torch et l'outil ont dépassés "
        "ensemble ; donnez-lui au moins {suggested} Mo (--memory d'un conteneur, --mem de "
        "Slurm), puis vérifiez à nouveau",
    "error.tool_needs.memory_unknown":
        "le worker a été tué par l'OOM killer du noyau pendant {at} : un cgroup mémoire de la "
        "vérification a compté ce kill ; donnez-lui au moins {suggested} Mo (--memory d'un "
        "conteneur, --mem de Slurm), puis vérifiez à nouveau",
}
